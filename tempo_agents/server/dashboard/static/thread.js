// A memory thread (#/threads/<threadId>?resourceId=<resourceId>): its runs (the one active, those that wait for a
// person and have let the thread go on, the queue in the order it will run, each queued message removable, a waiting run's answered rest marked as such, the runs
// done with how they ended) and its messages in the order they were said. From GET /api/threads/<threadId>; read again every second while a run is active or queued.

import { get, request } from "./api.js";
import { h, shown, visible } from "./dom.js";

const REFRESH_MS = 1000;

function runLink(runId) {
  return h("a", { href: `#/runs/${encodeURIComponent(runId)}` }, h("code", {}, visible(runId)));
}

function textOf(message) {
  const parts = Array.isArray(message.content) ? message.content : [];
  const text = parts.filter((p) => p && p.type === "text").map((p) => p.text).join("");
  const calls = parts.filter((p) => p && p.type === "tool-call").map((p) => `→ ${p.toolName}`);
  return [text, ...calls].filter(Boolean).join("\n");
}

export function threadLink(threadId, resourceId) {
  return `#/threads/${encodeURIComponent(threadId)}?resourceId=${encodeURIComponent(resourceId)}`;
}

export async function threadView(root, threadId, resourceId, { signal }) {
  const path = `/api/threads/${encodeURIComponent(threadId)}?resourceId=${encodeURIComponent(resourceId)}`;
  const active = h("ul", { class: "thread-runs active-runs" });
  const waiting = h("ul", { class: "thread-runs waiting-runs" });
  const queued = h("ol", { class: "thread-runs queued-runs" });
  const done = h("ol", { class: "thread-runs done-runs" });
  const messages = h("ol", { class: "thread-messages" });
  const problem = h("p", { class: "error", role: "alert", hidden: true });
  root.replaceChildren(h("section", { class: "thread", "aria-labelledby": "thread-title" },
    h("h1", { id: "thread-title", tabindex: "-1" }, "Thread ", h("code", {}, visible(threadId))),
    h("p", { class: "muted" }, "Resource ", h("code", {}, visible(resourceId)), " · one run at a time; a run that waits for a person lets the next message run"),
    problem,
    h("h2", {}, "Active"), active,
    h("h2", {}, "Waiting for a person"), waiting,
    h("h2", {}, "Queued"), queued,
    h("h2", {}, "Done"), done,
    h("h2", {}, "Messages"), messages));

  async function remove(runId) {
    try {
      await request("DELETE", `/api/threads/${encodeURIComponent(threadId)}/queue/${encodeURIComponent(runId)}?resourceId=${encodeURIComponent(resourceId)}`);
      problem.hidden = true;
    } catch (error) {
      problem.textContent = error.message;
      problem.hidden = false;
    }
    await load();
  }

  function empty(list, text) {
    if (!list.children.length) list.append(h("li", { class: "muted" }, text));
  }

  async function load() {
    const data = await get(path);
    if (signal.aborted) return data;
    active.replaceChildren(...data.runs.active.map((run) => h("li", { dataset: { runId: run.runId } },
      runLink(run.runId), " ", h("span", { class: "status running" }, "active"), h("span", { class: "muted" }, " ", visible(run.agentId)))));
    waiting.replaceChildren(...(data.runs.waiting || []).map((run) => h("li", { dataset: { runId: run.runId } },
      runLink(run.runId), " ", h("span", { class: "status suspended" }, "waiting"), h("span", { class: "muted" }, " ", visible(run.agentId)))));
    queued.replaceChildren(...data.runs.queued.map((run, n) => h("li", { dataset: { runId: run.runId } },
      runLink(run.runId), // its page says where it waits, and follows it once its turn comes
      h("span", { class: "muted" }, " ", visible(run.agentId), ` · position ${n + 1} `),
      run.continues
        ? h("span", { class: "status continues" }, "answered, goes on in its turn")
        : h("button", { type: "button", class: "remove-queued", onclick: () => remove(run.runId) }, "Remove from queue"))));
    done.replaceChildren(...data.runs.done.map((run) => h("li", { dataset: { runId: run.runId, status: run.status } },
      run.status === "removed" || run.status === "not-started" ? h("code", {}, visible(run.runId)) : runLink(run.runId),
      " ", h("span", { class: `status ${String(run.status).toLowerCase()}` }, visible(String(run.status).toLowerCase())))));
    messages.replaceChildren(...data.messages.map((message) => h("li", { class: `message ${message.role}` },
      h("span", { class: "label" }, message.role), shown(textOf(message), { tag: "p", attrs: { class: "pre" } }))));
    empty(active, "No run is active.");
    empty(waiting, "No run waits for a person.");
    empty(queued, "Nothing is queued.");
    empty(done, "No run has ended yet.");
    empty(messages, "No messages yet.");
    return data;
  }

  let data = await load();
  while (!signal.aborted && (data.runs.active.length || data.runs.queued.length)) {
    await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
    if (signal.aborted) return;
    data = await load();
  }
}
