// The audit view: every action that changed something (who, which tenant, what, to which target, how it ended,
// from where), newest first, filtered by principal, tenant, action, target and time, a page at a time.

import { get, query } from "./api.js";
import { fieldId, h, visible, when } from "./dom.js";

const PER_PAGE = 25;
const FILTERS = [
  ["principal", "Principal", "text", "alice"],
  ["tenant", "Tenant", "text", "resource id"],
  ["action", "Action", "text", "cancel, answer, schedule.create…"],
  ["target", "Target", "text", "run or schedule id"],
  ["since", "Since", "datetime-local", ""],
  ["until", "Until", "datetime-local", ""],
];

function isoTime(value) {
  return value ? new Date(value).toISOString() : "";
}

function outcomeText(record) {
  if (record.outcome === "refused") return `refused ${record.status ?? ""}${record.code ? ` ${record.code}` : ""}`.trim();
  if (record.outcome === "failed") return `failed ${record.status ?? ""}`.trim();
  return record.outcome;
}

export function auditView(root, { signal }) {
  const state = { cursors: [null], page: 0, next: null };
  const inputs = {};
  const fields = FILTERS.map(([name, label, type, placeholder]) => {
    const id = fieldId(name);
    inputs[name] = h("input", { id, name, type, placeholder });
    return h("div", { class: "field" }, h("label", { for: id }, label), inputs[name]);
  });
  const body = h("tbody");
  const status = h("p", { class: "muted", role: "status" });
  const prev = h("button", { type: "button", onclick: () => go(state.page - 1) }, "Newer");
  const next = h("button", { type: "button", onclick: () => go(state.page + 1) }, "Older");
  root.replaceChildren(
    h("section", { class: "audit-view", "aria-labelledby": "audit-title" },
      h("div", { class: "title-row" }, h("h1", { id: "audit-title" }, "Audit"), status),
      h("form", { class: "filters", role: "search", onsubmit: (e) => { e.preventDefault(); restart(); } },
        ...fields,
        h("div", { class: "field" }, h("button", { type: "submit", class: "primary" }, "Filter"))),
      h("div", { class: "table-wrap" },
        h("table", { class: "audit-table" },
          h("thead", {}, h("tr", {}, ["When", "Principal", "Tenant", "Action", "Target", "Outcome", "From"].map((c) => h("th", { scope: "col" }, c)))),
          body)),
      h("nav", { class: "pager", "aria-label": "Audit pages" }, prev, next)),
  );

  let sequence = 0;
  async function load() {
    const mine = ++sequence;
    const filters = {};
    for (const [name, , type] of FILTERS) {
      const value = inputs[name].value.trim();
      filters[name] = type === "datetime-local" ? isoTime(value) : value;
    }
    const page = await get(`/api/audit${query({ ...filters, perPage: PER_PAGE, cursor: state.cursors[state.page] })}`);
    if (signal.aborted || mine !== sequence) return;
    state.next = page.nextCursor;
    body.replaceChildren(
      ...page.records.map((record) =>
        h("tr", { dataset: { seq: String(record.seq), action: record.action, outcome: record.outcome } },
          h("td", { title: record.at }, when(record.at)),
          h("td", { class: "principal" }, visible(record.principal || "—")),
          h("td", { class: "tenant" }, visible(record.tenant || "—")),
          h("td", { class: "action" }, h("code", {}, visible(record.action))),
          h("td", { class: "target" }, visible(record.target || "—")),
          h("td", { class: `outcome ${record.outcome}` }, outcomeText(record)),
          h("td", { class: "from", title: record.userAgent || "" }, visible(record.client || "—")))),
    );
    status.textContent = page.records.length ? `${page.records.length} action${page.records.length === 1 ? "" : "s"} on this page` : "No actions recorded.";
    prev.disabled = state.page === 0;
    next.disabled = !state.next;
    root.querySelector(".audit-view").dataset.loadedAt = String(performance.now());
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
  return load();
}
