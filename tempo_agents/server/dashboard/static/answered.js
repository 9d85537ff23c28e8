// The answered view: who answered which waiting call, what they answered and when, newest first (a page of the
// answers the store keeps at a time, however many runs still wait).

import { get, query } from "./api.js";
import { answerWords } from "./forms.js";
import { h, visible, when } from "./dom.js";

const PER_PAGE = 25;

export function answeredView(root, { signal }) {
  const state = { cursors: [null], page: 0, next: null };
  const body = h("tbody");
  const status = h("p", { class: "muted", role: "status" });
  const prev = h("button", { type: "button", onclick: () => go(state.page - 1) }, "Newer");
  const next = h("button", { type: "button", onclick: () => go(state.page + 1) }, "Older");
  root.replaceChildren(
    h("section", { class: "answered-view", "aria-labelledby": "answered-title" },
      h("div", { class: "title-row" }, h("h1", { id: "answered-title" }, "Answered"), status),
      h("div", { class: "table-wrap" },
        h("table", { class: "answers-table" },
          h("thead", {}, h("tr", {}, ["When", "Who", "What", "Call", "Run"].map((c) => h("th", { scope: "col" }, c)))),
          body)),
      h("nav", { class: "pager", "aria-label": "Answered pages" }, prev, next)),
  );

  async function load() {
    const page = await get(`/api/inbox/answered${query({ perPage: PER_PAGE, cursor: state.cursors[state.page] })}`);
    if (signal.aborted) return;
    state.next = page.nextCursor;
    body.replaceChildren(
      ...page.items.map((answer) =>
        h("tr", { dataset: { runId: answer.runId, toolCallId: answer.toolCallId } },
          h("td", { title: answer.answeredAt || "" }, when(answer.answeredAt)),
          h("td", { class: "answerer" }, visible(answer.answeredBy || "someone (no name)")),
          h("td", { class: "what" }, visible(answerWords(answer) || "answered")),
          h("td", {}, h("code", {}, visible(answer.toolName))),
          h("td", {}, h("a", { href: `#/runs/${encodeURIComponent(answer.runId)}` }, visible(answer.runId))))),
    );
    const first = state.page * PER_PAGE;
    status.textContent = !page.total ? "No answers yet."
      : page.total <= PER_PAGE ? `${page.total} answer${page.total === 1 ? "" : "s"}`
      : `Answers ${first + 1}–${first + page.items.length} of ${page.total}`;
    prev.disabled = state.page === 0;
    next.disabled = !state.next;
  }

  function go(page) {
    if (page < 0 || (page > state.page && !state.next)) return;
    if (page > state.page) state.cursors[page] = state.next;
    state.page = page;
    load();
  }
  return load();
}
