// Two runs side by side (#/compare/<a>/<b>): their model steps aligned, the first step where they differ marked,
// each step's tool calls with their arguments diffed, and usage and duration per run. From /api/runs/compare.
// Steps are numbered as the API numbers them: from 0, a fork's copied steps counted.

import { get } from "./api.js";
import { duration, h, jsonBlock, visible } from "./dom.js";

function runLink(runId) {
  return h("a", { href: `#/runs/${encodeURIComponent(runId)}` }, h("code", {}, visible(runId)));
}

function summary(side, run) {
  const usage = run.usage || {};
  const origin = run.forkOf
    ? h("span", { class: "muted" }, " forked from ", runLink(run.forkOf.runId), ` at step ${run.forkOf.step}`)
    : null;
  return h("div", { class: "fact", dataset: { side } },
    h("dt", {}, side === "a" ? "Run A" : "Run B"),
    h("dd", {}, runLink(run.runId), origin, h("br"),
      `${run.steps ?? "—"} steps · ${usage.totalTokens ?? "—"} tokens (${usage.inputTokens ?? 0} in, ${usage.outputTokens ?? 0} out) · `,
      run.durationMs === null || run.durationMs === undefined ? "running" : duration(run.durationMs)));
}

function sideOfStep(step) {
  if (!step) return h("td", { class: "muted" }, "—");
  return h("td", {},
    step.prompt.map((m) => h("p", { class: "prompt" }, h("span", { class: "label" }, m.role), " ", visible(m.text))),
    step.text === null ? h("p", { class: "muted" }, "Not answered yet.") : h("p", { class: "pre" }, visible(step.text || "")),
    step.toolCalls.map((c) => h("p", {}, h("code", {}, `→ ${c.toolName}`))));
}

function callsOf(step) {
  if (!step.toolCalls.length) return null;
  return h("ul", { class: "call-diffs" }, step.toolCalls.map((diff) => {
    const a = diff.a;
    const b = diff.b;
    const changed = diff.changedArgs.length ? ` (changed: ${diff.changedArgs.join(", ")})` : "";
    const verdict = !a || !b ? "only in one run"
      : !diff.sameTool ? "another tool"
        : !diff.sameArgs ? `other arguments${changed}`
          : !diff.sameResult ? "same arguments, another result" : "the same";
    return h("li", { class: `call-diff ${verdict === "the same" ? "same" : "differs"}` },
      h("span", {}, `Call ${diff.index + 1}: ${verdict}`),
      h("div", { class: "call-sides" },
        h("div", {}, h("span", { class: "label" }, "A"), a ? [h("code", {}, visible(a.toolName)), jsonBlock(a.args)] : "—"),
        h("div", {}, h("span", { class: "label" }, "B"), b ? [h("code", {}, visible(b.toolName)), jsonBlock(b.args)] : "—")));
  }));
}

export async function compareView(root, a, b, { signal }) {
  const data = await get(`/api/runs/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  if (signal.aborted) return;
  const first = data.firstDifferentStep;
  root.replaceChildren(h("section", { class: "compare", "aria-labelledby": "compare-title" },
    h("h1", { id: "compare-title", tabindex: "-1" }, "Compare runs"),
    h("dl", { class: "facts" }, summary("a", data.a), summary("b", data.b)),
    h("p", { class: "first-difference", role: "status" },
      first === null ? "The runs are the same at every step." : `The runs differ from step ${first}.`),
    h("div", { class: "table-wrap" }, h("table", { class: "compare-table" },
      h("thead", {}, h("tr", {}, ["Step", "Run A", "Run B"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, data.steps.flatMap((step) => [
        h("tr", { class: step.same ? "same" : step.step === first ? "first-differing differs" : "differs", dataset: { step: step.step } },
          h("th", { scope: "row", class: "num" }, String(step.step), step.same ? "" : h("span", { class: "badge" }, "differs")),
          sideOfStep(step.a), sideOfStep(step.b)),
        step.same ? null : h("tr", { class: "calls-row" }, h("td", {}), h("td", { colspan: 2 }, callsOf(step))),
      ]))))));
}
