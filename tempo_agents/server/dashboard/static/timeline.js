// The timeline picture of a run: model steps and tool calls as bars on a time axis (parallel calls in lanes
// side by side), waits for people as hatched gaps labelled with their length, the one going on now included.
// A long wait is drawn compressed (a broken axis, marked as such), so the steps around it keep a legible width;
// the picture zooms (its track widens inside a scrolling box). A call that runs as a child run (a sub-agent or a
// workflow tool) is one bar, which opens the child's page.

import { duration, h, reachableWhenScrolling } from "./dom.js";

const LANE_PX = 26;
const MIN_BAR = 0.5; // % of the track: the narrowest bar drawn
const BREAK_SHARE = 8; // % of the track a compressed wait takes
const LONG_WAIT_MS = 5_000; // a wait is compressed only when longer than this ...
const LONG_WAIT_SHARE = 0.25; // ... and than this share of the whole run
const TICK_EVERY = 12; // about one axis label per this % of the track
const ZOOMS = [1, 2, 4, 8, 16];
const zoomOf = new Map(); // run id -> index in ZOOMS, kept across refreshes

function span(ms) {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : duration(ms);
}

// The axis: pieces of time, each with its share of the track; long waits get a small fixed share.
function axisPieces(start, end, waits) {
  const total = end - start;
  const long = waits
    .map((w) => ({ from: Date.parse(w.start), to: w.end ? Date.parse(w.end) : end, live: Boolean(w.live) }))
    .filter((w) => w.to - w.from > LONG_WAIT_MS && w.to - w.from > total * LONG_WAIT_SHARE)
    .sort((a, b) => a.from - b.from);
  const share = long.length ? Math.min(BREAK_SHARE, 40 / long.length) : 0;
  const pieces = [];
  let at = start;
  for (const wait of long) {
    if (wait.from > at) pieces.push({ from: at, to: wait.from, broken: false });
    pieces.push({ from: Math.max(wait.from, at), to: wait.to, broken: true });
    at = wait.to;
  }
  if (at < end) pieces.push({ from: at, to: end, broken: false });
  const plain = pieces.filter((p) => !p.broken).reduce((sum, p) => sum + (p.to - p.from), 0);
  const rest = 100 - share * long.length;
  let x = 0;
  for (const piece of pieces) {
    piece.x = x;
    piece.width = piece.broken ? share : plain > 0 ? ((piece.to - piece.from) / plain) * rest : rest;
    x += piece.width;
  }
  return pieces;
}

function position(pieces, t) {
  for (const piece of pieces) {
    if (t <= piece.to || piece === pieces[pieces.length - 1]) {
      const length = piece.to - piece.from;
      const within = length > 0 ? Math.min(Math.max((t - piece.from) / length, 0), 1) : 0;
      return piece.x + within * piece.width;
    }
  }
  return 0;
}

// An axis label: the time since the start, as precise as the step between labels, so that labels a step apart
// differ ("1m 55.5s", "1m 56.0s" after a long wait, where whole seconds would say "1m 56s" twice).
export function tickLabel(ms, step) {
  const digits = step >= 1000 ? 0 : step >= 100 ? 1 : 2;
  const seconds = (value, least = 0) => `${value.toFixed(Math.max(digits, least))}s`;
  if (ms < 10_000) return seconds(ms / 1000, 1);
  if (ms < 60_000) return seconds(ms / 1000);
  const minutes = Math.floor(ms / 60_000);
  const rest = ms - minutes * 60_000;
  if (minutes < 60) return step >= 60_000 ? `${minutes}m` : `${minutes}m ${seconds(rest / 1000)}`;
  const hours = Math.floor(minutes / 60);
  return step >= 60_000 ? `${hours}h ${minutes % 60}m` : `${hours}h ${minutes % 60}m ${seconds(rest / 1000)}`;
}

// Round steps of time for the axis labels: about one label per TICK_EVERY % of the track, none saying what the
// one before it said.
function ticks(pieces, start) {
  const found = [];
  for (const piece of pieces) {
    if (piece.broken) continue;
    const count = Math.max(1, Math.floor(piece.width / TICK_EVERY));
    const raw = (piece.to - piece.from) / count;
    const nice = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000]
      .find((step) => step >= raw) || raw;
    const first = Math.ceil((piece.from - start) / nice) * nice + start;
    for (let t = first; t <= piece.to; t += nice) found.push({ t, x: position(pieces, t), label: tickLabel(t - start, nice) });
  }
  const kept = [];
  for (const tick of found) {
    const last = kept[kept.length - 1];
    if (!last || (tick.x - last.x >= TICK_EVERY / 2 && tick.label !== last.label)) kept.push(tick);
  }
  return kept;
}

const MIN_SHOWN_CHARS = 6; // a label cut inside its bar shows at least this many characters, or goes elsewhere
const LABEL_GAP = 4; // px between a bar and its label beside it, and between two axis labels

// Each bar's label where it can be read whole: inside the bar when it fits; else beside it, when its lane is free
// there; else cut inside when enough of it shows; else only in the bar's tooltip (and to screen readers). Axis
// labels that would be written over the one before are left out. Measured after layout, again at every zoom.
function fitLabels(track, axis) {
  const bars = [...track.querySelectorAll(".bar")];
  for (const bar of bars) bar.classList.remove("label-beside", "label-hidden");
  const ticksShown = [...axis.querySelectorAll(".tick")];
  for (const tick of ticksShown) tick.classList.remove("crowded");
  const end = track.clientWidth;
  const measured = bars.map((bar) => {
    const label = bar.firstElementChild;
    return { bar, left: bar.offsetLeft, right: bar.offsetLeft + bar.offsetWidth, top: bar.offsetTop,
      need: label.scrollWidth, has: label.clientWidth, chars: label.textContent.length };
  });
  const beside = [];
  for (const m of measured) {
    if (m.need <= m.has + 1) continue;
    const from = m.right;
    const to = m.right + LABEL_GAP + m.need + LABEL_GAP; // where the label would stand, beside the bar
    const free = to <= end && !measured.some((o) => o !== m && o.top === m.top && o.left < to && o.right > from + 0.5) &&
      !beside.some((b) => b.top === m.top && b.from < to && b.to > from);
    if (free) {
      m.bar.classList.add("label-beside");
      beside.push({ top: m.top, from, to });
    } else if (m.has < (m.need / Math.max(m.chars, 1)) * MIN_SHOWN_CHARS) m.bar.classList.add("label-hidden");
  }
  const boxes = ticksShown.map((tick) => ({ tick, box: tick.getBoundingClientRect() }));
  let last = null;
  for (const { tick, box } of boxes.sort((a, b) => a.box.left - b.box.left)) {
    if (last && box.left < last.right + LABEL_GAP && !tick.classList.contains("broken")) tick.classList.add("crowded");
    else if (last && box.left < last.right + LABEL_GAP) {
      last.tick.classList.add("crowded"); // the mark of a compressed wait wins over a time beside it
      last = { tick, right: box.right };
    } else last = { tick, right: box.right };
  }
}

export function renderTimeline(data) {
  const start = Date.parse(data.startedAt);
  const end = Math.max(Date.parse(data.endedAt || data.now), start + 1);
  const total = end - start;
  const pieces = axisPieces(start, end, data.waits);
  const x = (iso) => position(pieces, iso ? Date.parse(iso) : end);
  const track = h("div", { class: "timeline-track", style: `height:${data.lanes * LANE_PX + 28}px` });
  for (const piece of pieces.filter((p) => p.broken)) {
    track.append(h("div", { class: "tl-break", style: `left:${piece.x}%;width:${piece.width}%`, title: `axis compressed: ${duration(piece.to - piece.from)} drawn short` }));
  }
  for (const wait of data.waits) {
    const left = x(wait.start);
    const ms = wait.end ? wait.seconds * 1000 : end - Date.parse(wait.start);
    const broken = pieces.some((p) => p.broken && Math.abs(p.x - left) < 0.01);
    const words = wait.live ? `waiting ${span(ms)}` : `waited ${span(ms)}`;
    track.append(
      h("div", {
        class: `tl-wait${wait.live ? " live" : ""}${broken ? " broken" : ""}`,
        style: `left:${left}%;width:${Math.max(x(wait.end) - left, MIN_BAR)}%`,
        title: `${wait.live ? "waiting for a person for" : "waited for a person"} ${duration(ms)}${broken ? " (drawn compressed)" : ""}`,
      }, h("span", {}, words)),
    );
  }
  for (const bar of data.bars) {
    const width = Math.max(x(bar.end) - x(bar.start), MIN_BAR);
    const left = Math.min(x(bar.start), 100 - width); // never past the right edge
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
    ticks(pieces, start).map((tick) => h("span", { class: tick.x > 92 ? "tick end" : "tick", style: `left:${tick.x}%` }, tick.label)),
    pieces.filter((p) => p.broken).map((p) => h("span", { class: "tick broken", style: `left:${p.x + p.width / 2}%`, title: "compressed" }, "≈")));
  const scroller = reachableWhenScrolling(h("div", { class: "timeline-scroll" }, h("div", { class: "timeline-canvas" }, track, axis)));
  let drawn = false;
  const fitting = new ResizeObserver(() => {
    if (track.isConnected) {
      drawn = true;
      fitLabels(track, axis);
    } else if (drawn) fitting.disconnect(); // drawn again: this picture is gone
  });
  fitting.observe(track);
  const level = zoomOf.get(data.runId) || 0;
  const canvas = scroller.firstChild;
  const zoomText = h("span", { class: "zoom-level", "aria-live": "polite" });
  const setZoom = (index) => {
    const bounded = Math.max(0, Math.min(ZOOMS.length - 1, index));
    zoomOf.set(data.runId, bounded);
    canvas.style.width = `${ZOOMS[bounded] * 100}%`;
    zoomText.textContent = `${ZOOMS[bounded]}×`;
    zoomOut.disabled = bounded === 0;
    zoomIn.disabled = bounded === ZOOMS.length - 1;
  };
  const zoomOut = h("button", { type: "button", class: "small", "aria-label": "Zoom out", onclick: () => setZoom((zoomOf.get(data.runId) || 0) - 1) }, "−");
  const zoomIn = h("button", { type: "button", class: "small", "aria-label": "Zoom in", onclick: () => setZoom((zoomOf.get(data.runId) || 0) + 1) }, "+");
  setZoom(level);
  const models = data.bars.filter((b) => b.kind === "model").length;
  const tools = data.bars.filter((b) => b.kind === "tool" || b.kind === "child").length;
  const waited = data.waits.reduce((sum, w) => sum + (w.end ? w.seconds * 1000 : end - Date.parse(w.start)), 0);
  return h("figure", { class: "timeline", "aria-label": `Timeline: ${models} model steps, ${tools} tool calls, waited ${duration(waited)} for people, over ${span(total)}` },
    scroller,
    h("figcaption", { class: "legend" },
      h("span", { class: "key model" }, "model step"), h("span", { class: "key tool" }, "tool call"),
      data.bars.some((b) => b.kind === "child") ? h("span", { class: "key child" }, "child run") : null,
      h("span", { class: "key gap" }, "waiting for a person"),
      pieces.some((p) => p.broken) ? h("span", { class: "key broken" }, "long wait, drawn short") : null,
      h("span", { class: "muted" }, ` · ${span(total)} in all`),
      h("span", { class: "zoom", role: "group", "aria-label": "Zoom" }, zoomOut, zoomText, zoomIn)));
}
