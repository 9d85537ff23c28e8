// The timeline picture of a run: model steps and tool calls as bars on a time axis (parallel calls in lanes
// side by side), waits for people as hatched gaps labelled with their length. A call that runs as a child run
// (a sub-agent or a workflow tool) is one bar, which opens the child's page.

import { duration, h } from "./dom.js";

const LANE_PX = 26;

function span(ms) {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : duration(ms);
}

export function renderTimeline(data) {
  const start = Date.parse(data.startedAt);
  const end = Math.max(Date.parse(data.endedAt || data.now), start + 1);
  const total = end - start;
  const x = (iso) => (((iso ? Date.parse(iso) : end) - start) / total) * 100;
  const track = h("div", { class: "timeline-track", style: `height:${data.lanes * LANE_PX + 28}px` });
  for (const wait of data.waits) {
    const left = x(wait.start);
    track.append(
      h("div", { class: "tl-wait", style: `left:${left}%;width:${Math.max(x(wait.end) - left, 0.3)}%`, title: `waited for a person ${duration(wait.seconds * 1000)}` },
        h("span", {}, `waited ${span(wait.seconds * 1000)}`)),
    );
  }
  for (const bar of data.bars) {
    const left = x(bar.start);
    const width = Math.max(x(bar.end) - left, 0.4);
    const took = duration(((bar.end ? Date.parse(bar.end) : end) - Date.parse(bar.start)));
    const child = bar.childRunId ? `#/runs/${encodeURIComponent(bar.childRunId)}` : null;
    track.append(
      h(child ? "a" : "div", {
        class: `bar ${bar.kind} ${bar.outcome}`,
        href: child,
        style: `left:${left}%;width:${width}%;top:${bar.lane * LANE_PX}px`,
        title: `${bar.label}: ${took}${bar.end ? "" : " (running)"}${child ? ` · child run ${bar.childRunId}` : ""}`,
        dataset: { kind: bar.kind, toolCallId: bar.toolCallId || "", childRunId: bar.childRunId || "" },
      }, h("span", {}, bar.label)),
    );
  }
  const axis = h("div", { class: "timeline-axis" },
    h("span", {}, "0s"), h("span", {}, span(total / 2)), h("span", {}, span(total)));
  const models = data.bars.filter((b) => b.kind === "model").length;
  const tools = data.bars.filter((b) => b.kind === "tool" || b.kind === "child").length;
  const waited = data.waits.reduce((total, w) => total + w.seconds, 0);
  return h("figure", { class: "timeline", "aria-label": `Timeline: ${models} model steps, ${tools} tool calls, waited ${duration(waited * 1000)} for people, over ${span(total)}` },
    track, axis,
    h("figcaption", { class: "legend" },
      h("span", { class: "key model" }, "model step"), h("span", { class: "key tool" }, "tool call"),
      data.bars.some((b) => b.kind === "child") ? h("span", { class: "key child" }, "child run") : null,
      h("span", { class: "key gap" }, "waiting for a person"), h("span", { class: "muted" }, ` · ${span(total)} in all`)));
}
