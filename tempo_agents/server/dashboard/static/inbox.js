// The inbox: every call waiting for a person, newest first, answered in place. Live: an item answered elsewhere
// stays where it is, marked the way the run page marks an answered call ("Approved by alice, 14:02"), until the
// person dismisses it or leaves the page; when they were working on it (typed, or pressed a button), what they
// typed stays too, with "already answered by <who>: <what>".

import { get, query } from "./api.js";
import { feed } from "./feed.js";
import { answerForm, answerWords, markAnswered } from "./forms.js";
import { duration, fieldId, findItem, h, itemKey, readable, shown, since, visible } from "./dom.js";
import { GROUPINGS, alikeKey, regroup, together } from "./inbox_groups.js";

const PER_PAGE = 25;
const GROUPING_KEY = "tempo-agents-inbox-group";
const SOON_MS = 15 * 60 * 1000;

function key(item) {
  return itemKey(item.runId, item.toolCallId);
}

// Someone here was working on the card: typed into it, or has the focus in it.
function touched(el) {
  return Boolean(el.querySelector("form[data-dirty], form[aria-busy]")) || el.contains(document.activeElement);
}

// "14:02" today, "3 Dec, 14:02" another day.
function clock(iso) {
  const at = new Date(iso || Date.now());
  const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  if (at.toDateString() === new Date().toDateString()) return time;
  return `${at.toLocaleDateString([], { day: "numeric", month: "short" })}, ${time}`;
}

// What an answer given elsewhere did, by whom and when: "Approved by alice, 14:02".
export function answerMark(answeredBy, answer) {
  if (!answer) return "No longer waiting: answered elsewhere, or its run ended";
  const data = answer?.data;
  const approved = data && typeof data === "object" && typeof data.approved === "boolean" ? data.approved : null;
  const action = answer?.action === "approve" || approved === true ? "approve"
    : answer?.action === "decline" || approved === false ? "decline" : answer?.action;
  const when = clock(answer?.answeredAt);
  if (action === "expire") return `Expired, ${when}: nobody answered in time`;
  const who = answeredBy || "someone else";
  if (action === "approve") return `Approved by ${who}, ${when}`;
  if (action === "decline") return `Declined by ${who}, ${when}${answer?.reason ? ` (“${answer.reason}”)` : ""}`;
  const words = answerWords(answer);
  return `Answered by ${who}, ${when}${words ? `: ${words}` : ""}`;
}

// The focus after `card` leaves: the next card's first control (else the one before, else the inbox's heading).
function focusAfter(card) {
  const skipped = (el) => el.dataset.answered || el.hidden;
  let next = card.nextElementSibling;
  while (next && skipped(next)) next = next.nextElementSibling;
  let previous = card.previousElementSibling;
  while (!next && previous && skipped(previous)) previous = previous.previousElementSibling;
  return firstControl(next || previous) || document.getElementById("inbox-title");
}

// Marks `el` as answered elsewhere, for good: who, what and when above the question; its form is disabled and
// shows only what was asked (or, when someone here was working on it, what they typed too). It leaves when
// dismissed.
function markElsewhere(el, answeredBy, answer) {
  if (el.hidden) { // folded in its group, unread: it only leaves
    el.remove();
    return;
  }
  el.dataset.answered = "elsewhere";
  const form = el.querySelector("form");
  if (form && touched(el)) markAnswered(form, answeredBy, answer);
  else if (form) {
    for (const control of form.querySelectorAll("button, input, select, textarea")) control.disabled = true;
    form.classList.add("settled"); // what was asked stays readable; nothing can be sent
  }
  for (const stale of el.querySelectorAll(".waited, .deadline")) stale.remove();
  el.querySelector(".answered-mark")?.remove();
  const mark = h("p", { class: "answered-mark", role: "status", title: answer?.answeredAt || "" }, visible(answerMark(answeredBy, answer)));
  if (!el.querySelector(".dismiss")) {
    const dismiss = h("button", { type: "button", class: "small dismiss" }, "Dismiss");
    dismiss.addEventListener("click", () => {
      const target = focusAfter(el);
      el.remove();
      target?.focus();
    });
    mark.append(" ", dismiss);
  }
  el.querySelector("header").after(mark);
}

// The call of `el` left the page: answered elsewhere (say who, what and when, from the run's answers), or only
// moved off this page or its run ended unanswered (it leaves, unless someone here was working on it).
async function markFromRun(el) {
  const folded = el.hidden; // folded in its group, unread (groups may change while the run is read)
  el.dataset.answered = "checking";
  let answer = null;
  try {
    const run = await get(`/api/runs/${encodeURIComponent(el.dataset.runId)}`);
    if ((run.pending || []).some((call) => call.toolCallId === el.dataset.toolCallId)) {
      delete el.dataset.answered; // still waiting (only moved off this page)
      if (!touched(el)) el.remove();
      return;
    }
    const answers = (run.answers || []).filter((a) => a.toolCallId === el.dataset.toolCallId);
    answer = answers[answers.length - 1] || null;
  } catch {
    answer = null;
  }
  if (folded) el.remove();
  else if (answer) markElsewhere(el, answer.answeredBy, answer);
  else if (touched(el)) markElsewhere(el, null, null);
  else el.remove();
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
// `left()` re-marks the groups once it is gone (the next card of its group comes out of the fold).
function leave(itemKeyValue, left) {
  const list = document.querySelector(".inbox .items");
  const el = list ? findItem(list, itemKeyValue) : null;
  if (!el) return;
  const hadFocus = el.contains(document.activeElement) || document.activeElement === document.body;
  const marker = h("div", { hidden: true, dataset: { answered: "leaving" } }); // where it was, while groups change
  el.replaceWith(marker);
  left();
  const target = focusAfter(marker);
  marker.remove();
  if (hadFocus) target?.focus();
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

function card(item, left) {
  const childApproval = item.kind === "approval" && /^agent-/.test(item.toolName || "") && item.suspendPayload?.toolName;
  const shown = item.kind !== "question" && item.kind !== "budget" && !childApproval && item.suspendPayload !== null && item.suspendPayload !== undefined;
  const subject = shown ? h("div", { class: "suspend-payload" }, readable(item.suspendPayload)) : null;
  return h(
    "article",
    {
      class: `item ${item.kind}`,
      dataset: { item: key(item), runId: item.runId, toolCallId: item.toolCallId, kind: item.kind, agentId: item.agentId || "", agentName: item.agentName || item.agentId || "agent", toolName: item.toolName || "", alike: alikeKey(item) },
      "aria-label": `${KIND_LABEL[item.kind]}: ${item.toolName}`,
    },
    h("header", {},
      h("span", { class: `badge ${item.kind}` }, KIND_LABEL[item.kind]),
      item.waitingForMe ? h("span", { class: "badge for-me" }, "Waiting for you") : null,
      h("strong", {}, visible(item.agentName || item.agentId || "agent")),
      h("code", { class: "tool" }, visible(item.toolName)),
      h("span", { class: "muted" }, visible(item.threadId ? `thread ${item.threadId}` : ""), visible(item.resourceId ? ` · ${item.resourceId}` : "")),
      h("span", { class: "waited", title: item.suspendedAt, dataset: { since: item.suspendedAt || "" } }, `waiting ${since(item.suspendedAt)}`),
      deadline(item),
      h("a", { href: `#/runs/${encodeURIComponent(item.runId)}`, class: "run-link" }, "Open run")),
    subject, // what the person decides comes first; who may answer and what led to it after
    answerForm(item, { onAnswered: (answered) => setTimeout(() => leave(key(answered), left), 600) }),
    item.approvers?.length ? h("p", { class: "approvers muted" }, "May be answered by ", visible(item.approvers.join(", "))) : null,
    asked(item),
  );
}

export function inboxView(root, { signal }) {
  const state = { cursors: [null], page: 0, total: 0, next: null, listed: [] };
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
  const groupingId = fieldId("inbox-group");
  const grouping = h("select", { id: groupingId, name: "group" },
    Object.entries(GROUPINGS).map(([value, label]) => h("option", { value }, label)));
  grouping.value = GROUPINGS[localStorage.getItem(GROUPING_KEY)] ? localStorage.getItem(GROUPING_KEY) : "alike";
  const open = new Set(); // the groups opened here
  const marked = () => regroup(list, grouping.value, open, (groupKey) => {
    if (open.has(groupKey)) open.delete(groupKey);
    else open.add(groupKey);
    marked();
    list.querySelector(`[data-group="${CSS.escape(groupKey)}"] > .group-head button`)?.focus();
  });
  grouping.addEventListener("change", () => {
    localStorage.setItem(GROUPING_KEY, grouping.value);
    open.clear();
    arrange();
  });
  const status = h("p", { class: "muted", role: "status" });
  const prev = h("button", { type: "button", onclick: () => go(state.page - 1) }, "Newer");
  const next = h("button", { type: "button", onclick: () => go(state.page + 1) }, "Older");
  root.replaceChildren(
    h("section", { class: "inbox", "aria-labelledby": "inbox-title" },
      h("div", { class: "title-row" }, h("h1", { id: "inbox-title", tabindex: "-1" }, "Inbox"), status,
        h("div", { class: "field inline" }, h("label", { for: agentId }, "Agent"), agent),
        h("div", { class: "field inline grouping" }, h("label", { for: groupingId }, "Group by"), grouping)),
      list,
      h("nav", { class: "pager", "aria-label": "Inbox pages" }, prev, next)),
  );
  let first = true;

  // The listed cards in the page's order, each group's together; a card no longer listed keeps its place (it
  // stays before the listed card it was before), then the groups are marked. Moving a card takes the focus out of
  // it: whoever was in a card (typing an answer, or just brought there by the card before it leaving) stays there.
  function arrange() {
    const focused = list.contains(document.activeElement) ? document.activeElement : null;
    const wanted = together(state.listed.filter((el) => !el.dataset.answered), grouping.value);
    const wantedSet = new Set(wanted);
    const before = new Map();
    let unlisted = [];
    for (const el of list.children) {
      if (!wantedSet.has(el)) unlisted.push(el);
      else if (unlisted.length) {
        before.set(el, unlisted);
        unlisted = [];
      }
    }
    const order = [...wanted.flatMap((el) => [...(before.get(el) || []), el]), ...unlisted];
    let next = null;
    for (let i = order.length - 1; i >= 0; i -= 1) {
      if (order[i].nextSibling !== next || order[i].parentNode !== list) list.insertBefore(order[i], next);
      next = order[i];
    }
    marked();
    if (focused && focused.isConnected && document.activeElement !== focused && !focused.closest("[hidden]")) {
      focused.focus({ preventScroll: true });
    }
  }

  async function load() {
    const started = performance.now();
    const page = await get(`/api/inbox${query({ perPage: PER_PAGE, cursor: state.cursors[state.page], agent: agent.value })}`);
    if (signal.aborted) return;
    state.total = page.total;
    state.next = page.nextCursor;
    const shown = new Map([...list.children].map((el) => [el.dataset.item, el]));
    const wanted = page.items.map((found) => shown.get(key(found)) || card(found, marked));
    for (const el of wanted) shown.delete(el.dataset.item);
    state.listed = wanted;
    arrange();
    for (const [, el] of shown) {
      if (el.dataset.answered) continue; // answered here (leaves in a moment), elsewhere (stays until dismissed)
      markFromRun(el).finally(marked); // answered elsewhere: say who, what and when
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
      // Answered elsewhere: marked at once (an answer sent from this card is on its way: its own reply decides).
      if (el && !el.dataset.answered && !el.querySelector("form[aria-busy]")) {
        markElsewhere(el, event.answeredBy, { ...event.answer, answeredAt: event.answeredAt });
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
