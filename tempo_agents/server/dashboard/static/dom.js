// Small DOM helpers: build elements, format times and JSON, and show text as it is: characters that change how
// text reads without being seen (bidirectional controls, zero-width and other format characters, control
// characters) are shown escaped and marked, and very long values are cut, with a button that shows them all.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === "text") el.textContent = value;
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function json(value) {
  return JSON.stringify(value, null, 2);
}

// Characters a reader cannot see or that reorder what they see; tabs and line breaks are shown as they are.
const INVISIBLE = /[\p{Cf}\p{Cc}\p{Co}\p{Zl}\p{Zp}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/u;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, "gu");
const PLAIN = new Set(["\n", "\t"]);

function escaped(char) {
  const code = char.codePointAt(0);
  const hex = code.toString(16).toUpperCase().padStart(4, "0");
  return code > 0xffff ? `\\u{${hex}}` : `\\u${hex}`;
}

// `text` as nodes: every invisible character becomes its escape (\u202E), marked so it stands out.
export function visible(text) {
  const fragment = document.createDocumentFragment();
  const value = String(text);
  if (!INVISIBLE.test(value)) {
    fragment.append(value);
    return fragment;
  }
  let last = 0;
  for (const match of value.matchAll(INVISIBLE_ALL)) {
    if (PLAIN.has(match[0])) continue;
    if (match.index > last) fragment.append(value.slice(last, match.index));
    const code = escaped(match[0]);
    fragment.append(h("span", { class: "invisible", title: `hidden character U+${match[0].codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}` }, code));
    last = match.index + match[0].length;
  }
  if (last < value.length) fragment.append(value.slice(last));
  return fragment;
}

export const CLIP = 2000;

// `text` in a `tag` element (shown visibly), cut after `limit` characters with a "Show all" button after it.
export function shown(text, { tag = "pre", attrs = {}, limit = CLIP } = {}) {
  const value = String(text);
  const el = h(tag, attrs);
  const fragment = document.createDocumentFragment();
  fragment.append(el);
  if (value.length <= limit) {
    el.append(visible(value));
    return fragment;
  }
  el.append(visible(value.slice(0, limit)), h("span", { class: "cut", "aria-hidden": "true" }, " …"));
  const more = h("button", { type: "button", class: "small show-all" }, `Show all (${value.length.toLocaleString("en")} characters)`);
  more.addEventListener("click", () => {
    el.replaceChildren(visible(value));
    more.remove();
  });
  fragment.append(more);
  return fragment;
}

// A block that scrolls is reachable from the keyboard (tabindex 0) while, and only while, it scrolls: a long
// argument can be read without a mouse, and short blocks add no stops to the tab order.
const laidOut = new WeakSet();
const scrolling = new ResizeObserver((entries) => {
  for (const { target } of entries) {
    if (!target.isConnected) {
      if (laidOut.has(target)) scrolling.unobserve(target); // taken off the page for good
      continue;
    }
    laidOut.add(target);
    const scrolls = target.scrollHeight > target.clientHeight + 1 || target.scrollWidth > target.clientWidth + 1;
    if (scrolls) target.setAttribute("tabindex", "0");
    else target.removeAttribute("tabindex");
  }
});

export function reachableWhenScrolling(el) {
  scrolling.observe(el);
  return el;
}

// A JSON value, pretty-printed in a <pre class="json"> (cut when very long; reachable by keyboard when it scrolls).
export function jsonBlock(value, attrs = {}) {
  const block = shown(json(value), { attrs: { ...attrs, class: `json ${attrs.class || ""}`.trim() } });
  reachableWhenScrolling(block.firstChild);
  return block;
}

// The key of an inbox item or a run page's waiting call (a plain string: it is compared, never put in a selector).
export function itemKey(runId, toolCallId) {
  return JSON.stringify([runId, toolCallId ?? null]);
}

// The element among `parent`'s children whose data-item is `key`.
export function findItem(parent, key) {
  return [...parent.children].find((el) => el.dataset.item === key) || null;
}

export function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours}h ${m % 60}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

export function since(iso) {
  return iso ? duration(Date.now() - Date.parse(iso)) : "";
}

export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" });
}

let uid = 0;
export function fieldId(prefix) {
  uid += 1;
  return `${prefix}-${uid}`;
}

// Readable view of any JSON value: objects as definition lists, the rest as text or preformatted JSON.
export function readable(value) {
  if (value === null || value === undefined) return h("span", { class: "muted" }, "—");
  if (typeof value !== "object") return shown(String(value), { tag: "span", attrs: { class: "value" } });
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== "object" || v === null)) return shown(value.join(", "), { tag: "span", attrs: { class: "value" } });
    return jsonBlock(value);
  }
  const dl = h("dl", { class: "payload" });
  for (const [key, v] of Object.entries(value)) {
    dl.append(h("dt", {}, visible(key)), h("dd", {}, typeof v === "object" && v !== null ? jsonBlock(v) : shown(String(v), { tag: "span", attrs: { class: "value" } })));
  }
  return dl;
}
