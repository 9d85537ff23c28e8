// Small DOM helpers: build elements, format times and JSON.

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
  if (typeof value !== "object") return h("span", {}, String(value));
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== "object" || v === null)) return h("span", {}, value.join(", "));
    return h("pre", { class: "json" }, json(value));
  }
  const dl = h("dl", { class: "payload" });
  for (const [key, v] of Object.entries(value)) {
    dl.append(h("dt", {}, key), h("dd", {}, typeof v === "object" && v !== null ? h("pre", { class: "json" }, json(v)) : String(v)));
  }
  return dl;
}
