// The runs table: filters, search, pages from Temporal visibility, refreshed live (at most once a second).

import { get, query } from "./api.js";
import { feed } from "./feed.js";
import { fieldId, h, visible, when } from "./dom.js";

const STATUSES = ["", "running", "suspended", "completed", "failed", "cancelled", "terminated", "timed-out"];
const PER_PAGE = 25;

export function runsView(root, { signal }) {
  const state = { cursors: [null], page: 0, next: null };
  const ids = { status: fieldId("status"), agent: fieldId("agent"), search: fieldId("search") };
  const status = h("select", { id: ids.status, name: "status" }, STATUSES.map((s) => h("option", { value: s }, s || "any")));
  const agent = h("input", { id: ids.agent, name: "agent", type: "text", placeholder: "agent id" });
  const search = h("input", { id: ids.search, name: "search", type: "search", placeholder: "run, agent or thread id starts with…" });
  const body = h("tbody");
  const summary = h("p", { class: "muted", role: "status" });
  const prev = h("button", { type: "button", onclick: () => go(state.page - 1) }, "Newer");
  const next = h("button", { type: "button", onclick: () => go(state.page + 1) }, "Older");
  root.replaceChildren(
    h("section", { class: "runs", "aria-labelledby": "runs-title" },
      h("div", { class: "title-row" }, h("h1", { id: "runs-title" }, "Runs"), summary),
      h("form", { class: "filters", role: "search", onsubmit: (e) => { e.preventDefault(); restart(); } },
        h("div", { class: "field" }, h("label", { for: ids.status }, "Status"), status),
        h("div", { class: "field" }, h("label", { for: ids.agent }, "Agent"), agent),
        h("div", { class: "field grow" }, h("label", { for: ids.search }, "Search"), search)),
      h("div", { class: "table-wrap" },
        h("table", { class: "runs-table" },
          h("thead", {}, h("tr", {}, ["Status", "Agent", "Run", "Thread", "Started", "Steps", "Tokens", "Waiting for"].map((c) => h("th", { scope: "col" }, c)))),
          body)),
      h("nav", { class: "pager", "aria-label": "Runs pages" }, prev, next)),
  );

  // A refresh (the feed, the timer) shows its answer unless a later load's answer is shown already: on a busy server a
  // page can take longer than the refreshes come, and dropping every answer but the newest request's would show none.
  // A load after a change of the filters or the page drops the answers of every load asked before it.
  let sequence = 0;
  let shown = 0;
  let changed = 0;
  async function load({ refresh = false } = {}) {
    const mine = ++sequence;
    if (!refresh) changed = mine;
    const page = await get(`/api/dashboard/runs${query({ status: status.value, agent: agent.value.trim(), search: search.value.trim(), perPage: PER_PAGE, cursor: state.cursors[state.page] })}`);
    if (signal.aborted || mine < changed || mine < shown) return;
    shown = mine;
    state.next = page.nextCursor;
    body.replaceChildren(
      ...page.runs.map((run) =>
        h("tr", { dataset: { runId: run.runId, status: run.status } },
          h("td", {}, h("span", { class: `status ${run.status}` }, run.status)),
          h("td", {}, run.agentId || ""),
          h("td", {}, h("a", { href: `#/runs/${encodeURIComponent(run.runId)}` }, run.runId),
            run.forkOf ? h("span", { class: "fork-of muted" }, " fork of ", h("a", { href: `#/runs/${encodeURIComponent(run.forkOf)}` }, run.forkOf)) : null,
            run.scheduleId ? h("span", { class: "scheduled-by muted" }, " scheduled by ", h("a", { href: "#/schedules" }, visible(run.scheduleId))) : null),
          h("td", {}, run.threadId || ""),
          h("td", { title: run.startedAt }, when(run.startedAt)),
          h("td", { class: "num" }, run.steps ?? "—"),
          h("td", { class: "num" }, run.totalTokens ?? "—"),
          h("td", {}, (run.waitingFor || []).join(", ")))),
    );
    summary.textContent = `${page.total} run${page.total === 1 ? "" : "s"}`;
    prev.disabled = state.page === 0;
    next.disabled = !state.next;
    root.querySelector(".runs").dataset.loadedAt = String(performance.now());
  }

  function go(page) {
    if (page < 0 || (page > state.page && !state.next)) return;
    if (page > state.page) state.cursors[page] = state.next;
    state.page = page;
    load();
  }
  function restart() {
    state.cursors = [null];
    state.page = 0;
    load();
  }
  status.addEventListener("change", restart);
  let typing = null;
  for (const input of [agent, search]) {
    input.addEventListener("input", () => {
      clearTimeout(typing);
      typing = setTimeout(restart, 250);
    });
  }
  let lastLoad = 0;
  let pending = null;
  feed.on((event) => {
    if (!(event.type === "changed" && event.runs) && event.type !== "answered") return;
    if (pending) return;
    const wait = Math.max(0, 1000 - (performance.now() - lastLoad));
    pending = setTimeout(() => {
      pending = null;
      lastLoad = performance.now();
      load({ refresh: true }).catch(() => {});
    }, wait);
  }, signal);
  const refresh = setInterval(() => { if (status.value === "" || status.value === "running") load({ refresh: true }).catch(() => {}); }, 5000);
  signal.addEventListener("abort", () => { clearInterval(refresh); clearTimeout(pending); });
  return load();
}
