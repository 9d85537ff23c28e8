// The inbox: every call waiting for a person, newest first, answered in place. Live: an item answered anywhere
// leaves (or, when someone was typing into it, is marked "already answered by ..." and keeps what was typed).

import { get, query } from "./api.js";
import { feed } from "./feed.js";
import { answerForm, markAnswered } from "./forms.js";
import { duration, h, readable, since } from "./dom.js";

const PER_PAGE = 25;
const SOON_MS = 15 * 60 * 1000;

function key(item) {
  return `${item.runId}\u0000${item.toolCallId}`;
}

function deadline(item) {
  if (!item.expiresAt) return null;
  const left = Date.parse(item.expiresAt) - Date.now();
  const text = left > 0 ? `due in ${duration(left)}` : "overdue";
  return h("span", { class: left < SOON_MS ? "deadline soon" : "deadline", title: item.expiresAt }, text);
}

const KIND_LABEL = { question: "Question", approval: "Approval", input: "Input needed" };

function card(item) {
  const childApproval = item.kind === "approval" && /^agent-/.test(item.toolName || "") && item.suspendPayload?.toolName;
  const shown = item.kind !== "question" && !childApproval && item.suspendPayload !== null && item.suspendPayload !== undefined;
  const subject = shown ? h("div", { class: "suspend-payload" }, readable(item.suspendPayload)) : null;
  return h(
    "article",
    { class: `item ${item.kind}`, dataset: { item: key(item), runId: item.runId, toolCallId: item.toolCallId }, "aria-label": `${KIND_LABEL[item.kind]}: ${item.toolName}` },
    h("header", {},
      h("span", { class: `badge ${item.kind}` }, KIND_LABEL[item.kind]),
      h("strong", {}, item.agentName || item.agentId || "agent"),
      h("code", { class: "tool" }, item.toolName),
      h("span", { class: "muted" }, item.threadId ? `thread ${item.threadId}` : "", item.resourceId ? ` · ${item.resourceId}` : ""),
      h("span", { class: "waited", title: item.suspendedAt, dataset: { since: item.suspendedAt || "" } }, `waiting ${since(item.suspendedAt)}`),
      deadline(item),
      h("a", { href: `#/runs/${encodeURIComponent(item.runId)}`, class: "run-link" }, "Open run")),
    subject,
    answerForm(item, { onAnswered: () => setTimeout(() => document.querySelector(`[data-item="${CSS.escape(key(item))}"]`)?.remove(), 600) }),
  );
}

export function inboxView(root, { signal }) {
  const state = { cursors: [null], page: 0, total: 0, next: null };
  const list = h("div", { class: "items", "aria-live": "polite" });
  const status = h("p", { class: "muted", role: "status" });
  const prev = h("button", { type: "button", onclick: () => go(state.page - 1) }, "Newer");
  const next = h("button", { type: "button", onclick: () => go(state.page + 1) }, "Older");
  root.replaceChildren(
    h("section", { class: "inbox", "aria-labelledby": "inbox-title" },
      h("div", { class: "title-row" }, h("h1", { id: "inbox-title" }, "Inbox"), status),
      list,
      h("nav", { class: "pager", "aria-label": "Inbox pages" }, prev, next)),
  );
  let first = true;

  async function load() {
    const started = performance.now();
    const page = await get(`/api/inbox${query({ perPage: PER_PAGE, cursor: state.cursors[state.page] })}`);
    if (signal.aborted) return;
    state.total = page.total;
    state.next = page.nextCursor;
    const shown = new Map([...list.children].map((el) => [el.dataset.item, el]));
    const wanted = page.items.map(key);
    let before = null;
    for (let i = wanted.length - 1; i >= 0; i -= 1) {
      let el = shown.get(wanted[i]);
      if (!el) el = card(page.items[i]);
      shown.delete(wanted[i]);
      if (el.nextSibling !== before || el.parentNode !== list) list.insertBefore(el, before);
      before = el;
    }
    for (const [, el] of shown) {
      if (el.querySelector("form[data-dirty]") && el.dataset.answered !== "true") continue; // keep what was typed
      el.remove();
    }
    status.textContent = page.total ? `${page.total} waiting run${page.total === 1 ? "" : "s"}` : "Nothing is waiting for you.";
    document.getElementById("inbox-count").textContent = page.total ? String(page.total) : "";
    prev.disabled = state.page === 0;
    next.disabled = !state.next;
    if (first) {
      first = false;
      requestAnimationFrame(() => {
        const painted = performance.now();
        window.dispatchEvent(new CustomEvent("tempo:inbox-painted", { detail: { loadMs: painted - started, at: painted, items: page.items.length } }));
      });
    }
  }

  function go(page) {
    if (page < 0 || (page > state.page && !state.next)) return;
    if (page > state.page) state.cursors[page] = state.next;
    state.page = page;
    list.replaceChildren();
    load();
  }

  let timer = null;
  const reload = () => {
    clearTimeout(timer);
    timer = setTimeout(() => load().catch(() => {}), 150);
  };
  feed.on((event) => {
    if (event.type === "answered") {
      const el = list.querySelector(`[data-item="${CSS.escape(key(event))}"]`) ||
        (event.toolCallId ? null : list.querySelector(`[data-run-id="${CSS.escape(event.runId)}"]`));
      if (el && el.dataset.answered !== "true") {
        const form = el.querySelector("form");
        if (form?.dataset.dirty) markAnswered(form, event.answeredBy);
        else el.remove();
      }
      reload();
    } else if (event.type === "changed" && event.inbox) reload();
  }, signal);
  const tick = setInterval(() => {
    for (const el of list.querySelectorAll(".waited")) el.textContent = `waiting ${since(el.dataset.since)}`;
  }, 1000);
  signal.addEventListener("abort", () => clearInterval(tick));
  return load();
}
