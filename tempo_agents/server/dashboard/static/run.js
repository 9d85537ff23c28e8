// A run's page: status, mode, usage, its waiting calls (answerable here too), the task list, the timeline and
// the live journal as a conversation. Follows /api/runs/:runId/stream for the whole run. A child run (a sub-agent's
// or a workflow tool's) links back to its parent, where its waiting calls are answered.

import { ApiError, follow, get, post } from "./api.js";
import { Conversation } from "./conversation.js";
import { duration, findItem, h, itemKey, readable, visible, when } from "./dom.js";
import { answerForm, markAnswered } from "./forms.js";
import { renderTimeline } from "./timeline.js";
import { threadLink } from "./thread.js";

const TASK_TOOLS = /^task_/;

function throttle(fn, ms) {
  let timer = null;
  let last = 0;
  return () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      last = performance.now();
      fn();
    }, Math.max(0, ms - (performance.now() - last)));
  };
}

function taskList(tasks) {
  if (!tasks || !tasks.length) return h("p", { class: "muted" }, "No tasks.");
  return h("ul", { class: "tasks" },
    tasks.map((task) =>
      h("li", { class: `task ${task.status}`, dataset: { taskId: task.id, status: task.status } },
        h("input", { type: "checkbox", disabled: true, checked: task.status === "completed", "aria-label": task.content }),
        h("span", { class: "content" }, task.status === "in_progress" ? task.activeForm : task.content),
        task.status === "in_progress" ? h("span", { class: "badge running" }, "in progress") : null)));
}

const MODEL_BAR = /^model step (\d+)$/;

// How long each model step took, by step (from the timeline's bars): ms, or null while it runs.
function latencies(timeline) {
  const found = new Map();
  for (const bar of timeline?.bars || []) {
    const match = MODEL_BAR.exec(bar.label);
    if (bar.kind === "model" && match) found.set(Number(match[1]), bar.end ? Date.parse(bar.end) - Date.parse(bar.start) : null);
  }
  return found;
}

function messageLine(message) {
  const parts = message.parts.map((part) =>
    part.type === "text" ? h("span", { class: "pre" }, visible(part.text))
      : part.type === "tool-call" ? h("code", {}, `→ ${part.toolName}(…)`)
        : h("code", { class: part.isError ? "error" : "" }, `← ${part.toolName}${part.isError ? " (error)" : ""}`));
  return h("li", { class: `input-message ${message.role}` }, h("span", { class: "label" }, message.role), ...parts);
}

// Per model step, for operators: the messages new to the model at that step, its latency and its tokens.
function stepsTable(data, timeline, opened, forkAt) {
  if (!data.steps.length) return h("p", { class: "muted" }, "No model step has ended yet.");
  const took = latencies(timeline);
  return h("div", { class: "table-wrap" }, h("table", { class: "steps-table" },
    h("thead", {}, h("tr", {}, ["Step", "Latency", "Tokens", "Model input", "Fork"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, data.steps.map((step) => {
      const usage = step.usage;
      const ms = took.get(step.step);
      const history = step.historyMessages ? ` (${step.historyMessages} from memory)` : "";
      return h("tr", { dataset: { step: step.step } },
        h("td", { class: "num" }, String(step.step)),
        h("td", { class: "num latency" }, ms === undefined ? "—" : ms === null ? "running" : ms < 10_000 ? `${(ms / 1000).toFixed(2)}s` : duration(ms)),
        h("td", { class: "num tokens" }, usage ? `${usage.inputTokens ?? 0} in · ${usage.outputTokens ?? 0} out` : "—"),
        h("td", { class: "model-input" },
          h("details", { open: opened.has(step.step), ontoggle: (event) => (event.target.open ? opened.add(step.step) : opened.delete(step.step)) },
            h("summary", {}, `${step.inputMessages} message${step.inputMessages === 1 ? "" : "s"} sent, ${step.input.length} new${history}`),
            h("ol", { class: "input-messages" }, step.input.map(messageLine)))),
        h("td", {}, h("button", { type: "button", class: "small fork-here", onclick: () => forkAt(step.step),
          "aria-label": `Fork from step ${step.step}` }, "Fork from here")));
    }))));
}

export function runView(root, runId, { signal, session }) {
  const facts = h("dl", { class: "facts" });
  const pending = h("div", { class: "pending" });
  const waiting = h("section", { class: "waiting", "aria-labelledby": "waiting-title", hidden: true },
    h("h2", { id: "waiting-title" }, "Waiting for people"), pending);
  const budgetRows = h("div", { class: "budget-rows" });
  const budgetWait = h("div", { class: "budget-wait" });
  const budgetBox = h("section", { class: "budget", "aria-labelledby": "budget-title", hidden: true },
    h("h2", { id: "budget-title" }, "Budget"), budgetWait, budgetRows);
  let shownBudgetWait = null;
  let budgetOpen = false; // a folded table of counters stays open once opened
  let shownFigures = null;
  // Usage and what remains of each counter the run spends from (run, thread, resource; total, day, month): a table
  // when a counter has a limit, else one line (the table folded under it). While the run waits for its budget, the
  // form that raises it or ends the run, first on the page (a decision); else the section stands beside the
  // conversation.
  function showBudget(budget) {
    budgetBox.hidden = !budget || !(budget.counters || []).length;
    if (!budget) return;
    const dollars = (n) => `$${Number(n).toFixed(4)}`;
    const of = (used, limit, show) => (limit === undefined ? show(used) : `${show(used)} of ${show(limit)}`);
    const left = (c) => [c.remainingTokens !== undefined ? `${c.remainingTokens} tokens` : null,
      c.remainingCostUsd !== undefined ? dollars(c.remainingCostUsd) : null].filter(Boolean).join(" · ") || "no limit";
    const counters = budget.counters || [];
    const table = h("table", { class: "budget-table" },
      h("thead", {}, h("tr", {}, ["Counter", "Tokens", "Cost", "Left"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, counters.map((c) => h("tr", { dataset: { scope: c.scope, period: c.period } },
        h("td", {}, `${c.scope} · ${c.period === "total" ? "total" : c.periodKey}`),
        h("td", { class: "num" }, of(c.tokens, c.limitTokens, String)),
        h("td", { class: "num" }, of(c.costUsd, c.limitCostUsd, dollars)),
        h("td", { class: "num" }, left(c))))));
    const limited = counters.some((c) => c.limitTokens !== undefined || c.limitCostUsd !== undefined);
    const spent = counters.find((c) => c.scope === "run") || counters[0];
    const figures = JSON.stringify(counters);
    if (figures !== shownFigures) { // drawn again only when a figure changed (the focus stays where it is)
      shownFigures = figures;
      budgetRows.replaceChildren(limited ? table : h("details", { class: "budget-unlimited", open: budgetOpen,
        ontoggle: (event) => { budgetOpen = event.target.open; } },
      h("summary", {}, `No limits · this run spent ${spent.tokens} tokens, ${dollars(spent.costUsd)}`), table));
    }
    const wait = budget.waiting;
    if (wait && budgetBox.previousElementSibling !== waiting) waiting.after(budgetBox);
    else if (!wait && budgetBox.parentNode !== sideBudget) sideBudget.append(budgetBox);
    const key = wait ? wait.stop.waitId : null;
    if (key === shownBudgetWait) return;
    shownBudgetWait = key;
    // A wait answered here keeps saying so ("Budget raised", "Run ended") once it is over, as an answered call does,
    // until the run waits for its budget again.
    if (!wait && budgetWait.querySelector('[data-item][data-answered="true"]')) return;
    budgetWait.replaceChildren(...(wait ? [h("div", { class: "item", dataset: { item: itemKey(runId, key) } },
      answerForm({ runId, toolCallId: key, toolName: "budget", kind: "budget", suspendPayload: wait.stop }))] : []));
  }
  const sideBudget = h("div", { class: "side-budget" });
  const steps = h("div", { class: "steps" });
  const openedSteps = new Set(); // the steps whose input is open stay open when the table is drawn again
  new MutationObserver(() => { waiting.hidden = !pending.children.length; }).observe(pending, { childList: true });
  const tasks = h("div", { class: "task-list", "aria-live": "polite" });
  // The run's notification events and how each delivery went (queued, delivering, delivered, failed).
  const deliveries = h("ul", { class: "deliveries" });
  const notifications = h("section", { class: "notifications", "aria-labelledby": "notifications-title", hidden: true },
    h("h2", { id: "notifications-title" }, "Notifications"), deliveries);
  const timeline = h("div", { class: "timeline-wrap" });
  const log = h("div", { class: "conversation", "aria-live": "polite" });
  const statusBadge = h("span", { class: "status" });
  const parentLink = h("p", { class: "parent-run", hidden: true });
  const lineage = h("p", { class: "lineage", hidden: true });
  const scheduledBy = h("p", { class: "scheduled-by", hidden: true });
  // A run its thread still queues has no workflow yet: where it waits, until its turn comes (the stream waits too).
  const queuedNote = h("p", { class: "queued-note", role: "status", hidden: true });
  // A fork asks the model again at `step` with the run's transcript before it; its page opens.
  async function forkAt(step) {
    try {
      const started = await post(`/api/runs/${encodeURIComponent(runId)}/fork`, { atStep: step });
      location.hash = `#/runs/${encodeURIComponent(started.runId)}`;
    } catch (error) {
      alert(error.message);
    }
  }
  const cancelDialog = h("dialog", { class: "confirm", "aria-labelledby": "cancel-title" },
    h("form", { method: "dialog" },
      h("h2", { id: "cancel-title" }, "Cancel this run?"),
      h("p", {}, "The run stops; calls that are running are cancelled."),
      h("div", { class: "actions" },
        h("button", { value: "keep", class: "primary" }, "Keep running"),
        h("button", { value: "cancel", class: "danger" }, "Cancel run"))));
  const cancel = h("button", { type: "button", class: "danger", onclick: () => cancelDialog.showModal() }, "Cancel run…");
  // A failed run, after a fix: a fork at its last good step with the same inputs; its page opens.
  const retry = h("button", { type: "button", class: "retry", hidden: true, onclick: async () => {
    try {
      const started = await post(`/api/runs/${encodeURIComponent(runId)}/retry`);
      location.hash = `#/runs/${encodeURIComponent(started.runId)}`;
    } catch (error) {
      alert(error.message);
    }
  } }, "Retry from last good step");
  // Steer, interrupt, roll back: what a person may do to the run while it works (the thread's active run).
  function confirmDialog(id, title, text, keepLabel, actLabel) {
    return h("dialog", { class: "confirm", "aria-labelledby": `${id}-title` },
      h("form", { method: "dialog" },
        h("h2", { id: `${id}-title` }, title),
        h("p", {}, text),
        h("div", { class: "actions" },
          h("button", { value: "keep", class: "primary" }, keepLabel),
          h("button", { value: id, class: "danger" }, actLabel))));
  }
  const interruptDialog = confirmDialog("interrupt", "Interrupt this run?",
    "The run stops after the step at work now, keeping what it did; a call waiting for a person is closed.",
    "Keep running", "Interrupt run");
  const rollbackDialog = confirmDialog("rollback", "Roll this run back?",
    "The run is cancelled and its messages are removed from its thread: the next run on the thread will not see them. Its journal stays here.",
    "Keep it", "Roll back run");
  const interrupt = h("button", { type: "button", class: "interrupt", onclick: () => interruptDialog.showModal() }, "Interrupt…");
  const rollback = h("button", { type: "button", class: "danger rollback", onclick: () => rollbackDialog.showModal() }, "Roll back…");
  const controlNote = h("p", { class: "control-note", role: "status", hidden: true });
  function note(text, kind = "") {
    controlNote.textContent = text;
    controlNote.className = `control-note ${kind}`;
    controlNote.hidden = false;
  }
  interruptDialog.addEventListener("close", async () => {
    if (interruptDialog.returnValue !== "interrupt") return;
    try {
      await post(`/api/runs/${encodeURIComponent(runId)}/interrupt`);
      note("Interrupt requested: the run stops at its next step boundary.");
    } catch (error) {
      note(error.message, "error");
    }
  });
  rollbackDialog.addEventListener("close", async () => {
    if (rollbackDialog.returnValue !== "rollback") return;
    note("Rolling back…");
    try {
      const done = await post(`/api/runs/${encodeURIComponent(runId)}/rollback`);
      note(done.threadId
        ? `Rolled back: ${done.removedMessages} message${done.removedMessages === 1 ? "" : "s"} removed from thread ${done.threadId}.`
        : "Rolled back (the run had no thread).");
    } catch (error) {
      note(error.message, "error");
    }
  });
  const steerText = h("textarea", { id: "steer-text", rows: 2, required: true, placeholder: "A message the model reads at its next step" });
  const steerSend = h("button", { type: "submit", class: "primary" }, "Send");
  const steerForm = h("form", { class: "steer", "aria-labelledby": "steer-title", hidden: true },
    h("h2", { id: "steer-title" }, h("label", { for: "steer-text" }, "Send to the run")),
    steerText,
    h("div", { class: "actions" }, steerSend));
  steerForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = steerText.value.trim();
    if (!text) return;
    steerSend.disabled = true;
    note("Sending… (delivered when the step at work ends)");
    try {
      const sent = await post(`/api/runs/${encodeURIComponent(runId)}/steer`, { message: text });
      steerText.value = "";
      note(sent.status === "delivered"
        ? `Delivered: the model reads it at step ${sent.step}.`
        : "Kept: the model reads it at the step after the waiting call is answered.");
    } catch (error) {
      note(error.status === 409 ? `Not delivered: ${error.message}` : error.message, "error");
    } finally {
      steerSend.disabled = false;
    }
  });
  cancelDialog.addEventListener("close", async () => {
    if (cancelDialog.returnValue !== "cancel") return;
    try {
      await post(`/api/runs/${encodeURIComponent(runId)}/cancel`);
    } catch (error) {
      alert(error.message);
    }
  });
  const uiLink = session.temporalUiUrl
    ? h("a", { href: `${session.temporalUiUrl}/namespaces/${encodeURIComponent(session.namespace || "default")}/workflows/${encodeURIComponent(runId)}`, target: "_blank", rel: "noopener" }, "Open in Temporal UI")
    : null;
  root.replaceChildren(
    h("section", { class: "run", "aria-labelledby": "run-title" },
      h("div", { class: "title-row" }, h("h1", { id: "run-title", tabindex: "-1" }, "Run ", h("code", {}, runId)), statusBadge, uiLink, interrupt, rollback, cancel, retry),
      controlNote,
      waiting, // the decision comes first: what waits for the person, before anything about the run
      queuedNote,
      parentLink,
      lineage,
      scheduledBy,
      facts,
      h("h2", {}, "Timeline"), timeline,
      h("details", { class: "operator" }, h("summary", {}, h("h2", {}, "Model steps: input, latency, tokens")), steps),
      h("div", { class: "run-grid" },
        h("div", { class: "col" },
          h("h2", {}, "Conversation"), log,
          steerForm), // a message for the run, after what it did
        h("aside", { class: "col side" },
          h("h2", {}, "Tasks"), tasks, sideBudget, notifications))),
    cancelDialog,
    interruptDialog,
    rollbackDialog,
  );

  let shownPending = "";
  let shownFacts = ""; // the facts and the lineage are drawn again only when they change: a link being clicked
  let shownLineage = ""; // while the page refreshes would otherwise be replaced between mouse down and up
  let closed = false; // the workflow closed: its status and figures change no more
  let queued = false; // its thread still queues it: no timeline or steps yet
  let shownQueue = "";
  let tasksSeen = null;
  async function loadDetail() {
    const run = await get(`/api/runs/${encodeURIComponent(runId)}`);
    if (signal.aborted) return;
    closed = Boolean(run.closedAt);
    statusBadge.textContent = run.status;
    statusBadge.className = `status ${run.status}`;
    root.querySelector(".run").dataset.status = run.status;
    const active = run.status === "running" || run.status === "suspended";
    cancel.hidden = !active;
    interrupt.hidden = !active;
    steerForm.hidden = !active;
    queued = run.status === "queued" || run.status === "starting"; // no workflow yet
    const queue = run.queue;
    const queueKey = queue ? JSON.stringify(queue) : "";
    if (queueKey !== shownQueue) queuedNote.replaceChildren(...(queue ? [`Queued on thread `,
      h("a", { href: threadLink(run.threadId, run.resourceId), class: "thread-link" }, visible(run.threadId)),
      `: position ${queue.position}`, ...queue.behind.flatMap((id, n) => [n ? ", " : ", behind ",
        h("a", { href: `#/runs/${encodeURIComponent(id)}` }, visible(id))]),
      ". It starts when its turn comes."] : []));
    shownQueue = queueKey;
    queuedNote.hidden = !queue;
    rollback.hidden = queued || Boolean(run.parentRunId) || !run.threadId || Boolean(run.rolledBack); // a run on a memory thread (a child's messages are its parent's)
    if (run.rolledBack && controlNote.hidden) { // the journal's last chunk, after the finish a stream ends at
      const r = run.rolledBack;
      note(`Rolled back: ${r.removedMessages} message${r.removedMessages === 1 ? "" : "s"} removed from thread ${r.threadId}.`);
    }
    retry.hidden = !(run.status === "failed" || run.status === "cancelled" || run.status === "timed-out" || run.status === "terminated");
    const usage = run.usage || {};
    const factsKey = JSON.stringify([run.agentId, run.threadId, run.resourceId, run.mode, run.status, run.step, usage,
      run.startedAt, run.closedAt]);
    if (factsKey !== shownFacts) facts.replaceChildren(
      ...[["Agent", run.agentId], ["Thread", run.threadId && run.resourceId
        ? h("a", { href: threadLink(run.threadId, run.resourceId), class: "thread-link" }, visible(run.threadId)) : run.threadId],
        ["Resource", run.resourceId], ["Mode", run.mode],
        // Steps are numbered from 0, as in the API: a running run's counter counts the steps whose calls have ended,
        // so it is the number of the step at work.
        run.status === "running" && run.step !== null ? ["Step", `${run.step} (running)`] : ["Steps", run.step], ["Tokens", usage.totalTokens !== undefined ? `${usage.totalTokens} (${usage.inputTokens ?? 0} in, ${usage.outputTokens ?? 0} out)` : null],
        ["Started", when(run.startedAt)], ["Closed", when(run.closedAt)]]
        .filter(([, v]) => v !== null && v !== undefined && v !== "")
        .map(([k, v]) => h("div", { class: "fact" }, h("dt", {}, k), h("dd", {}, v instanceof Node ? v : visible(String(v))))),
    );
    shownFacts = factsKey;
    const parent = run.parentRunId;
    if (parent && parentLink.hidden) {
      const call = run.parentToolCallId ? ` (call ${run.parentToolCallId})` : "";
      parentLink.replaceChildren("Child run of ", h("a", { href: `#/runs/${encodeURIComponent(parent)}`, class: "parent-link" }, parent), call);
      parentLink.hidden = false;
    }
    const origin = run.forkOf;
    const forks = run.forks || [];
    const runLink = (id) => h("a", { href: `#/runs/${encodeURIComponent(id)}` }, visible(id));
    const lineageKey = JSON.stringify([origin, forks]);
    if (lineageKey !== shownLineage) lineage.replaceChildren(
      ...(origin ? ["Forked from ", h("span", { class: "fork-origin" }, runLink(origin.runId)), ` at step ${origin.step} · `,
        h("a", { href: `#/compare/${encodeURIComponent(origin.runId)}/${encodeURIComponent(runId)}`, class: "compare-link" }, "Compare with origin")] : []),
      ...(forks.length ? [origin ? " · " : "", `Forks (${forks.length}): `,
        ...forks.flatMap((id, n) => [n ? ", " : "", h("span", { class: "fork" }, runLink(id))])] : []),
    );
    shownLineage = lineageKey;
    lineage.hidden = !origin && !forks.length;
    if (run.scheduleId && scheduledBy.hidden) {
      scheduledBy.replaceChildren("Started by the schedule ", h("a", { href: "#/schedules" }, visible(run.scheduleId)));
      scheduledBy.hidden = false;
    }
    const calls = run.pending || [];
    const signature = calls.map((c) => `${c.toolCallId}:${c.round}`).join(",");
    if (signature !== shownPending) {
      shownPending = signature;
      const answer = (call) => parent // a child's wait is answered through its parent's call, which shows it too
        ? h("p", { class: "muted" }, "Answered on the ", h("a", { href: `#/runs/${encodeURIComponent(parent)}` }, "parent run"), ".")
        : answerForm({ ...call, runId, kind: call.requiresApproval ? "approval" : call.toolId === "ask_user" ? "question" : "input" }, {
          onAnswered: () => {
            const el = findItem(pending, itemKey(runId, call.toolCallId));
            const next = el?.nextElementSibling?.querySelector("button:not(:disabled), input:not(:disabled), textarea:not(:disabled)");
            (next || document.getElementById("run-title"))?.focus();
          },
        });
      // A call answered elsewhere while someone here worked on its form: the form stays, saying who and what.
      const kept = [...pending.children].filter((el) => {
        const form = el.querySelector("form");
        if (!form || el.dataset.answered === "true") return false;
        if (el.dataset.answered === "elsewhere") return true;
        if (!form.matches("[data-dirty], [aria-busy]") && !el.contains(document.activeElement)) return false;
        if (calls.some((call) => itemKey(runId, call.toolCallId) === el.dataset.item)) return false;
        const [, toolCallId] = JSON.parse(el.dataset.item);
        const answers = (run.answers || []).filter((a) => a.toolCallId === toolCallId);
        const last = answers[answers.length - 1] || null;
        markAnswered(form, last?.answeredBy, last);
        return true;
      });
      pending.replaceChildren(
        ...kept,
        ...calls.map((call) => {
          const shownAlready = findItem(pending, itemKey(runId, call.toolCallId)); // keeps what is typed in it
          if (shownAlready && !shownAlready.dataset.answered && shownAlready.dataset.round === String(call.round)) return shownAlready;
          // What a tool waiting for input says (its suspend payload): a question's and an approval's form say
          // theirs themselves.
          const says = !parent && !call.requiresApproval && call.toolId !== "ask_user" && call.suspendPayload !== null && call.suspendPayload !== undefined;
          return h("div", { class: "item", dataset: { item: itemKey(runId, call.toolCallId), round: String(call.round) } },
            h("p", {}, h("code", {}, visible(call.toolName)), " since ", when(call.suspendedAt)),
            says ? h("div", { class: "suspend-payload" }, readable(call.suspendPayload)) : null,
            answer(call));
        }),
      );
      // Each call answered here is folded in the conversation below, so what it asks is said once.
      conversation.answeredAbove(parent ? [] : calls.map((call) => call.toolCallId));
      // No heading over nothing (the observer above keeps it so when an item is dismissed).
    }
    showBudget(run.budget);
    if (tasksSeen === null) tasks.replaceChildren(taskList(run.tasks)); // else the journal's latest is shown
    const sent = run.notifications || [];
    notifications.hidden = !sent.length;
    deliveries.replaceChildren(...sent.map((d) => h("li", { class: `delivery ${d.status}`, dataset: { event: d.eventId } },
      h("code", {}, visible(d.eventType)), " to ", visible(d.channel), ": ", h("span", { class: "delivery-status" }, visible(d.status)),
      d.attempts ? ` after ${d.attempts} attempt${d.attempts === 1 ? "" : "s"}` : "",
      d.error ? h("span", { class: "muted" }, " (", visible(d.error), ")") : "")));
  }
  let timelineData = null;
  let stepsData = null;
  async function loadTimeline() {
    const data = await get(`/api/runs/${encodeURIComponent(runId)}/timeline`);
    if (signal.aborted) return;
    timelineData = data;
    timeline.replaceChildren(renderTimeline(data));
    if (stepsData) steps.replaceChildren(stepsTable(stepsData, timelineData, openedSteps, forkAt));
  }
  async function loadSteps() {
    const data = await get(`/api/runs/${encodeURIComponent(runId)}/steps`);
    if (signal.aborted) return;
    stepsData = data;
    conversation.prompt(data.prompt);
    steps.replaceChildren(stepsTable(data, timelineData, openedSteps, forkAt));
  }
  const detailSoon = throttle(() => loadDetail().catch(() => {}), 250);
  const timelineSoon = throttle(() => {
    loadTimeline().catch(() => {});
    loadSteps().catch(() => {});
  }, 1500);

  const conversation = new Conversation(log, runId);
  let painting = [];
  const paint = () => {
    const painted = painting;
    painting = [];
    const at = performance.timeOrigin + performance.now();
    for (const chunk of painted) window.dispatchEvent(new CustomEvent("tempo:chunk-painted", { detail: { chunk, at } }));
  };
  // A tab out of sight (document.hidden: a background tab, a minimised window) keeps the run's chunks and shows
  // them all when it is looked at again: fifty tabs on one run cost the browser the drawing of the ones in sight.
  let held = [];
  const showHeld = () => {
    if (document.hidden) return;
    const shown = held;
    held = [];
    for (const chunk of shown) show(chunk);
    detailSoon();
    timelineSoon();
  };
  document.addEventListener("visibilitychange", showHeld);
  signal.addEventListener("abort", () => document.removeEventListener("visibilitychange", showHeld));
  follow(`/api/runs/${encodeURIComponent(runId)}/stream`, (chunk, offset) => {
    if (offset !== null) chunk.offset = offset;
    if (document.hidden) held.push(chunk);
    else show(chunk);
  }, { signal }).then(() => { detailSoon(); timelineSoon(); }).catch((error) => {
    if (error instanceof ApiError) log.append(h("p", { class: "error", role: "alert" }, error.message));
  });
  function show(chunk) {
    conversation.add(chunk);
    if (!painting.length) requestAnimationFrame(paint);
    painting.push(chunk);
    const type = chunk.type;
    if (type === "data-task-updated" && Array.isArray(chunk.data?.tasks)) {
      tasks.replaceChildren(taskList(chunk.data.tasks)); // the list as the workflow just changed it
      tasksSeen = chunk.offset ?? tasksSeen;
    } else if (type === "tool-result" && TASK_TOOLS.test(chunk.payload?.toolName || "")) detailSoon();
    if (type === "finish" || type === "tool-call-suspended" || type === "tool-call-approval" || type === "step-finish" || type === "tool-result" || type === "tool-output-denied") {
      detailSoon();
      timelineSoon();
    }
  }
  const refresh = setInterval(() => { // a run between its last chunk and its close included; out of sight, nothing
    if (!closed && !document.hidden) { detailSoon(); timelineSoon(); }
  }, 3000);
  signal.addEventListener("abort", () => clearInterval(refresh));
  // A queued run has no timeline or steps yet: their 404s wait for its turn (the refresh above loads them then).
  return Promise.allSettled([loadDetail(), loadTimeline(), loadSteps()]).then(([detail, ...others]) => {
    const failed = [detail, ...others].find((result) => result.status === "rejected");
    if (failed && !(queued && detail.status === "fulfilled")) throw failed.reason;
  });
}
