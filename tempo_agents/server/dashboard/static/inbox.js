// The inbox: every call waiting for a person, newest first, answered in place. Live: an item answered anywhere
// leaves; when someone was working on it (typed, or pressed a button), it stays, marked "already answered by
// <who>: <what>" with what was typed kept, until they dismiss it.

import { get, query } from "./api.js";
import { feed } from "./feed.js";
import { answerForm, markAnswered } from "./forms.js";
import { duration, fieldId, findItem, h, itemKey, readable, shown, since, visible } from "./dom.js";

const PER_PAGE = 25;
const SOON_MS = 15 * 60 * 1000;

function key(item) {
  return itemKey(item.runId, item.toolCallId);
}

// Someone here was working on the card: typed into it, or has the focus in it.
function touched(el) {
  return Boolean(el.querySelector("form[data-dirty], form[aria-busy]")) || el.contains(document.activeElement);
}

// Who answered the call of `el` and what (from the run's answers), shown on the card for good.
async function markFromRun(el) {
  el.dataset.answered = "elsewhere";
  const form = el.querySelector("form");
  let answer = null;
  try {
    const run = await get(`/api/runs/${encodeURIComponent(el.dataset.runId)}`);
    if ((run.pending || []).some((call) => call.toolCallId === el.dataset.toolCallId)) {
      delete el.dataset.answered; // still waiting (only moved off this page): nothing to say
      return;
    }
    const answers = (run.answers || []).filter((a) => a.toolCallId === el.dataset.toolCallId);
    answer = answers[answers.length - 1] || null;
  } catch {
    answer = null;
  }
  if (form) markAnswered(form, answer?.answeredBy, answer);
}

function deadline(item) {
  if (!item.expiresAt) return null;
  const left = Date.parse(item.expiresAt) - Date.now();
  const text = left > 0 ? `due in ${duration(left)}` : "overdue";
  return h("span", { class: left < SOON_MS ? "deadline soon" : "deadline", title: item.expiresAt }, text);
}

// The first thing to act on in `card` (the first enabled control of its form, else its link).
function firstControl(card) {
  const controls = "form :is(button, input, textarea, select):not(:disabled)";
  return card?.querySelector(controls) || card?.querySelector("a[href]") || null;
}

// The card answered here leaves; the focus goes to the next item (or the inbox's heading when none is left).
function leave(itemKeyValue) {
  const list = document.querySelector(".inbox .items");
  const el = list ? findItem(list, itemKeyValue) : null;
  if (!el) return;
  const hadFocus = el.contains(document.activeElement) || document.activeElement === document.body;
  let next = el.nextElementSibling;
  while (next && next.dataset.answered) next = next.nextElementSibling;
  let previous = el.previousElementSibling;
  while (!next && previous && previous.dataset.answered) previous = previous.previousElementSibling;
  el.remove();
  if (!hadFocus) return;
  const target = firstControl(next || previous) || document.getElementById("inbox-title");
  target?.focus();
}

const ASKED_LIMIT = 600;

// What led to the call: the user's prompt and the model's text in the step that made it.
function asked(item) {
  if (!item.prompt && !item.leadText) return null;
  return h("div", { class: "asked" },
    item.prompt ? h("div", { class: "prompt" }, h("span", { class: "label" }, "Asked"), shown(item.prompt, { tag: "span", attrs: { class: "value" }, limit: ASKED_LIMIT })) : null,
    item.leadText ? h("div", { class: "lead" }, h("span", { class: "label" }, "The model said"), shown(item.leadText, { tag: "span", attrs: { class: "value" }, limit: ASKED_LIMIT })) : null);
}

const KIND_LABEL = { question: "Question", approval: "Approval", input: "Input needed", budget: "Budget" };

function card(item) {
  const childApproval = item.kind === "approval" && /^agent-/.test(item.toolName || "") && item.suspendPayload?.toolName;
  const shown = item.kind !== "question" && item.kind !== "budget" && !childApproval && item.suspendPayload !== null && item.suspendPayload !== undefined;
  const subject = shown ? h("div", { class: "suspend-payload" }, readable(item.suspendPayload)) : null;
  return h(
    "article",
    { class: `item ${item.kind}`, dataset: { item: key(item), runId: item.runId, toolCallId: item.toolCallId }, "aria-label": `${KIND_LABEL[item.kind]}: ${item.toolName}` },
    h("header", {},
      h("span", { class: `badge ${item.kind}` }, KIND_LABEL[item.kind]),
      h("strong", {}, visible(item.agentName || item.agentId || "agent")),
      h("code", { class: "tool" }, visible(item.toolName)),
      h("span", { class: "muted" }, visible(item.threadId ? `thread ${item.threadId}` : ""), visible(item.resourceId ? ` · ${item.resourceId}` : "")),
      h("span", { class: "waited", title: item.suspendedAt, dataset: { since: item.suspendedAt || "" } }, `waiting ${since(item.suspendedAt)}`),
      deadline(item),
      h("a", { href: `#/runs/${encodeURIComponent(item.runId)}`, class: "run-link" }, "Open run")),
    asked(item),
    subject,
    answerForm(item, { onAnswered: (answered) => setTimeout(() => leave(key(answered)), 600) }),
  );
}

export function inboxView(root, { signal }) {
  const state = { cursors: [null], page: 0, total: 0, next: null };
  const list = h("div", { class: "items", "aria-live": "polite" });
  const agentId = fieldId("inbox-agent");
  const agent = h("select", { id: agentId, name: "agent" }, h("option", { value: "" }, "every agent"));
  get("/api/agents?partial=true").then((agents) => {
    for (const [id, details] of Object.entries(agents)) {
      agent.append(h("option", { value: id }, details?.name && details.name !== id ? `${details.name} (${id})` : id));
    }
  }).catch(() => {});
  agent.addEventListener("change", () => {
    state.cursors = [null];
    state.page = 0;
    list.replaceChildren();
    load();
  });
  const status = h("p", { class: "muted", role: "status" });
  const prev = h("button", { type: "button", onclick: () => go(state.page - 1) }, "Newer");
  const next = h("button", { type: "button", onclick: () => go(state.page + 1) }, "Older");
  root.replaceChildren(
    h("section", { class: "inbox", "aria-labelledby": "inbox-title" },
      h("div", { class: "title-row" }, h("h1", { id: "inbox-title", tabindex: "-1" }, "Inbox"), status,
        h("div", { class: "field inline" }, h("label", { for: agentId }, "Agent"), agent)),
      list,
      h("nav", { class: "pager", "aria-label": "Inbox pages" }, prev, next)),
  );
  let first = true;

  async function load() {
    const started = performance.now();
    const page = await get(`/api/inbox${query({ perPage: PER_PAGE, cursor: state.cursors[state.page], agent: agent.value })}`);
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
      if (el.dataset.answered === "elsewhere") continue; // told who answered: stays until dismissed
      if (el.dataset.answered === "true") continue; // answered here: leaves in a moment, handing on the focus
      if (el.dataset.answered !== "true" && touched(el)) {
        markFromRun(el); // answered elsewhere while someone here worked on it: say who, and what
        continue;
      }
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
      const el = findItem(list, key(event)) ||
        (event.toolCallId ? null : [...list.children].find((card) => card.dataset.runId === event.runId));
      if (el && !el.dataset.answered) {
        const form = el.querySelector("form");
        if (form && touched(el)) markAnswered(form, event.answeredBy, event.answer);
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
