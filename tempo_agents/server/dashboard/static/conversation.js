// A run's journal as a readable conversation: streamed text, tool calls with their arguments, progress and
// results, errors, suspensions and answers with who answered. Chunks arrive one by one (in journal order).
// A sub-agent's call (agent-<key>) carries the child's chunks as its tool-output chunks (payload.output is the
// child's chunk): they feed a Conversation of their own, nested under the call, so grandchildren nest again.

import { h, json, jsonBlock, readable, shown, visible } from "./dom.js";
import { argsDiff } from "./forms.js";

const CHILD_TOOL = /^(agent|workflow)-/;
const WAITING = new Set(["waiting", "waiting for approval"]); // the states of a call that waits for a person

function relayed(p) {
  return CHILD_TOOL.test(p.toolName || "") && p.output && typeof p.output === "object" && typeof p.output.type === "string";
}

// A line saying that the run or a call waits for a person; once the wait is over (answered, ended, cancelled) it
// says so instead (`past`), so no line of a run that waits for nobody says it waits.
function waitingLine(tag, className, text, past) {
  return h(tag, { class: `${className} waiting-line`, dataset: { past } }, text);
}

function waitOver(line) {
  line.textContent = line.dataset.past;
  line.classList.replace("waiting-line", "wait-over");
}

export class Conversation {
  constructor(container, runId = null) {
    this.el = container;
    this.runId = runId;
    this.chunks = [];
    this.reset();
  }

  reset() {
    this.el.replaceChildren(...(this.promptEl ? [this.promptEl] : []));
    this.message = null;
    this.texts = new Map();
    this.tools = new Map();
  }

  add(chunk) {
    if (chunk.type === "step-reset") {
      const from = chunk.payload.discardFrom;
      if (from !== undefined && from !== null) this.chunks = this.chunks.filter((c) => c.offset === undefined || c.offset < from);
      this.reset();
      for (const kept of this.chunks) this.apply(kept);
      return;
    }
    this.chunks.push(chunk);
    this.apply(chunk);
  }

  // The user's prompt, first in the conversation (it is not in the journal: the page reads it from the run).
  prompt(text) {
    if (this.promptEl || !text) return;
    this.promptEl = h("div", { class: "msg user" }, h("div", { class: "who" }, "user"), shown(text, { tag: "p", attrs: { class: "text" } }));
    this.el.prepend(this.promptEl);
  }

  assistant() {
    if (!this.message) {
      this.message = h("div", { class: "msg assistant" }, h("div", { class: "who" }, "assistant"));
      this.el.append(this.message);
    }
    return this.message;
  }

  // The calls whose answer form stands above the conversation (the run page's waiting section): folded here, so
  // what they ask is said once, on the form; unfolded again when they no longer wait there.
  answeredAbove(toolCallIds) {
    this.above = new Set(toolCallIds);
    for (const [id, block] of this.tools) this.fold(block, this.above.has(id));
  }

  fold(block, above) {
    if (above === Boolean(block.foldedAbove)) return;
    block.foldedAbove = above;
    block.open = !above;
    const summary = block.querySelector(":scope > summary");
    summary.querySelector(":scope > .above-note")?.remove();
    if (above) summary.append(h("span", { class: "above-note" }, "its form is above"));
  }

  tool(payload) {
    let block = this.tools.get(payload.toolCallId);
    if (!block) {
      const body = h("div", { class: "tool-body" });
      const quiet = /^task_/.test(payload.toolName || ""); // the task list shows what these did
      block = h("details", { class: "tool-call", open: !quiet, dataset: { toolCallId: payload.toolCallId } },
        h("summary", {}, h("code", {}, visible(payload.toolName || "tool")), h("span", { class: "tool-state" }, "")), body);
      block.body = body;
      this.tools.set(payload.toolCallId, block);
      this.assistant().append(block);
      if (this.above?.has(payload.toolCallId)) this.fold(block, true);
    }
    return block;
  }

  // The nested conversation of a call that runs as a child run, with the link to the child's own page.
  child(block, payload, childRunId = null) {
    const id = childRunId || (this.runId ? `${this.runId}-${payload.toolCallId}` : null);
    if (!block.child) {
      const link = h("a", { class: "child-link", href: id ? `#/runs/${encodeURIComponent(id)}` : "#" }, "Open child run");
      const body = h("div", { class: "conversation nested" });
      const kind = /^workflow-/.test(payload.toolName || "") ? "workflow" : "sub-agent";
      // The link stands under the summary, not in it: a summary is a control, and holds no other control.
      block.child = h("details", { class: "child-run", open: true, dataset: { childRunId: id || "" } },
        h("summary", {}, `${kind} run `, h("code", {}, id || "")), h("p", { class: "child-link-row" }, link), body);
      block.child.link = link;
      block.child.conversation = new Conversation(body, id);
      block.body.append(block.child);
    } else if (childRunId && block.child.dataset.childRunId !== childRunId) {
      block.child.dataset.childRunId = childRunId;
      block.child.link.href = `#/runs/${encodeURIComponent(childRunId)}`;
      block.child.querySelector("summary code").textContent = childRunId;
      block.child.conversation.runId = childRunId;
    }
    return block.child;
  }

  state(block, text, kind) {
    const el = block.querySelector(":scope > summary > .tool-state");
    el.textContent = text;
    el.className = `tool-state ${kind || ""}`;
    block.dataset.state = text;
    if (!WAITING.has(text)) for (const line of block.body.querySelectorAll(":scope > .suspended > .waiting-line")) waitOver(line);
  }

  // How a call ended when it did not end with a result of its own making: declined, expired, cancelled.
  // A later tool-result (the reason the model reads) does not turn it into "done".
  ended(block, text, kind) {
    block.ended = text;
    this.state(block, text, kind);
  }

  // A data chunk's line; several in a row of one type are one group ("data-stamp × 300"), folded.
  dataLine(container, type, line) {
    const last = container.lastElementChild;
    if (last?.classList.contains("data-group") && last.dataset.type === type) {
      last.count += 1;
      last.querySelector(":scope > summary").textContent = `${type} \u00d7 ${last.count}`;
      last.lines.append(line);
      return;
    }
    if (last?.classList.contains("data") && last.dataset.type === type) {
      const lines = h("div", { class: "data-lines" });
      const group = h("details", { class: "data-group", dataset: { type } }, h("summary", {}, `${type} \u00d7 2`), lines);
      group.count = 2;
      group.lines = lines;
      last.replaceWith(group);
      lines.append(last, line);
      return;
    }
    line.dataset.type = type;
    container.append(line);
  }

  // The run was cancelled: every call still running or waiting was cancelled with it, and nobody waits any more
  // (here, nor in the conversations of its child runs).
  cancelled() {
    for (const block of this.tools.values()) {
      if (!block.ended && (block.dataset.state === "running" || WAITING.has(block.dataset.state))) this.ended(block, "cancelled", "bad");
    }
    for (const line of this.el.querySelectorAll(".waiting-line")) waitOver(line);
  }

  apply(chunk) {
    const p = chunk.payload || {};
    switch (chunk.type) {
      case "start": // a segment after a wait: the wait is over
        for (const line of this.el.querySelectorAll(":scope > .segment-end.waiting-line")) waitOver(line);
        this.message = null;
        break;
      case "step-start":
        this.message = null;
        break;
      case "text-delta": {
        let text = this.texts.get(p.id);
        if (!text || !text.isConnected) {
          text = h("p", { class: "text" });
          this.texts.set(p.id, text);
          this.assistant().append(text);
        }
        text.append(visible(p.text));
        break;
      }
      case "tool-call": {
        const block = this.tool(p);
        block.args = p.args;
        block.body.prepend(jsonBlock(p.args, { class: "args", "aria-label": "Arguments" }));
        this.state(block, "running");
        break;
      }
      case "tool-output": {
        const block = this.tool(p);
        if (relayed(p)) {
          this.child(block, p).conversation.add(p.output);
          break;
        }
        block.body.append(shown(typeof p.output === "string" ? p.output : json(p.output), { tag: "div", attrs: { class: "progress" } }));
        break;
      }
      case "tool-result": {
        const block = this.tool(p);
        // A sub-agent's result: its text (its tool results are in the nested conversation above).
        const r = block.child && p.result && typeof p.result === "object" && "subAgentToolResults" in p.result
          ? { text: p.result.text } : p.result;
        const text = r && typeof r === "object" && typeof r.content === "string" && "isError" in r ? r.content : null;
        block.body.append(h("div", { class: "result" }, h("span", { class: "label" }, "result"), text !== null ? shown(text, { tag: "span", attrs: { class: "pre" } }) : readable(r)));
        if (p.answeredBy) block.body.append(h("div", { class: "answered-by" }, `answered by ${p.answeredBy}`));
        // A result that is an error: thrown by the tool, or its input refused ({error: true, message, ...}).
        const failed = p.isError || (r && typeof r === "object" && r.error === true && typeof r.message === "string");
        if (!block.ended) this.state(block, failed ? "error" : "done", failed ? "bad" : "ok");
        break;
      }
      case "tool-error": {
        const block = this.tool(p);
        block.body.append(shown(p.error, { tag: "div", attrs: { class: "error" } }));
        if (p.answeredBy) block.body.append(h("div", { class: "answered-by" }, `answered by ${p.answeredBy}`));
        this.state(block, "error", "bad");
        break;
      }
      case "tool-call-suspended": {
        const block = this.tool(p);
        // What it asks, unless that is its arguments again (an ask_user question), shown just above.
        const repeated = block.args !== undefined && json(block.args) === json(p.suspendPayload);
        block.body.append(h("div", { class: "suspended" }, waitingLine("span", "label", "waiting for a person", "waited for a person"),
          repeated ? null : readable(p.suspendPayload)));
        this.state(block, "waiting", "wait");
        break;
      }
      case "tool-call-approval": {
        const block = this.tool(p);
        block.body.append(h("div", { class: "suspended" }, waitingLine("span", "label", "waiting for approval", "waited for approval")));
        this.state(block, "waiting for approval", "wait");
        break;
      }
      case "tool-output-denied": {
        const block = this.tool(p);
        const reason = p.approval?.reason;
        if (p.approval?.expired) {
          block.body.append(h("div", { class: "error" }, "expired: nobody answered in time"));
          this.ended(block, "expired", "wait");
          break;
        }
        block.body.append(h("div", { class: "error" }, `declined${reason ? `: ${reason}` : ""}${p.answeredBy ? ` (by ${p.answeredBy})` : ""}`));
        this.ended(block, "declined", "bad");
        break;
      }
      case "error":
        this.el.append(h("div", { class: "msg error", role: "alert" }, visible(p.error || json(p))));
        break;
      case "abort":
        this.cancelled();
        break;
      case "finish": {
        const reason = p.stepResult?.reason || "";
        if (reason === "aborted") {
          this.cancelled();
          this.el.append(h("div", { class: "segment-end aborted", role: "status" }, "The run was cancelled: nothing more will happen in it."));
        } else if (reason === "suspended") this.el.append(waitingLine("div", "segment-end suspended", "waiting for a person", "waited for a person"));
        else this.el.append(h("div", { class: `segment-end ${reason}` }, `finished (${reason})`));
        this.message = null;
        break;
      }
      default:
        if (chunk.type === "data-task-updated") break; // shown as the task list
        if (chunk.type === "data-user-message") { // a message sent into the running run (a steer)
          const d = chunk.data || {};
          this.el.append(h("div", { class: "msg user steer", dataset: { position: String(d.position ?? "") } },
            h("div", { class: "who" }, `user${d.sentBy ? ` · sent by ${d.sentBy}` : ""} · into step ${(d.step ?? 0) + 1}`),
            shown(d.text || "", { tag: "p", attrs: { class: "text" } })));
          this.message = null;
          break;
        }
        if (chunk.type === "data-interrupted") {
          const d = chunk.data || {};
          const by = d.requestedBy ? ` by ${d.requestedBy}` : d.byRunId ? ` by run ${d.byRunId}` : "";
          this.el.append(h("div", { class: "segment-end run-interrupted", role: "status" }, visible(`Interrupted${by}: the run kept what it did and took no further step.`)));
          this.message = null;
          break;
        }
        if (chunk.type === "data-rolled-back") {
          const d = chunk.data || {};
          const removed = d.threadId ? ` ${d.removedMessages} message${d.removedMessages === 1 ? "" : "s"} removed from thread ${d.threadId}.` : "";
          this.el.append(h("div", { class: "segment-end run-rolled-back", role: "status" }, visible(`Rolled back: the run was cancelled and its messages taken off its thread.${removed}`)));
          break;
        }
        if (chunk.type === "data-child-run" && chunk.data?.toolCallId) {
          this.child(this.tool({ toolCallId: chunk.data.toolCallId, toolName: chunk.data.toolName }), chunk.data, chunk.data.childRunId);
          break;
        }
        const expiredCall = chunk.data?.toolCallId;
        if (chunk.type === "data-tool-args-changed" && this.tools.has(expiredCall)) {
          const d = chunk.data;
          this.tools.get(expiredCall).body.append(h("div", { class: "args-changed" },
            h("span", { class: "label" }, visible(`arguments changed${d.changedBy ? ` by ${d.changedBy}` : ""} before approval`)),
            h("ul", { class: "args-diff", "aria-label": "Changes to the arguments" }, ...argsDiff(d.before, d.after))));
          break;
        }
        if (chunk.type === "data-suspension-expired" && this.tools.has(expiredCall)) {
          const block = this.tools.get(expiredCall);
          block.body.append(h("div", { class: "error" }, "expired: nobody answered in time"));
          this.ended(block, "expired", "wait");
          break;
        }
        if (chunk.type.startsWith("data-")) {
          const target = p.toolCallId ? this.tools.get(p.toolCallId) : null;
          const line = h("div", { class: "data" }, h("span", { class: "label" }, chunk.type), shown(json(chunk.data ?? p), { tag: "span" }));
          this.dataLine(target ? target.body : this.assistant(), chunk.type, line);
        }
    }
  }
}
