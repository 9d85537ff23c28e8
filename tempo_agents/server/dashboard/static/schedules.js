// The schedules page: the App's schedules (GET /api/schedules) with their agent, when they run, whether they are
// paused, their next runs and their latest runs (links to the runs' pages), and Edit (a form that changes the
// schedule in place: PATCH /api/schedules/{id}, only what was changed) / Pause / Unpause / Run now / Delete (with
// a confirmation) calling the schedule routes. Refreshed every 5 s (not while the edit form is open).

import { ApiError, get, post, request } from "./api.js";
import { h, visible, when } from "./dom.js";

const SHOWN_NEXT = 3;
const SHOWN_RECENT = 5;

// A length of time as schedules are written: "30s", "15m", "1h30m", "7d".
export function compact(seconds) {
  let left = Math.round(seconds);
  const parts = [];
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]]) {
    if (left >= size) {
      parts.push(`${Math.floor(left / size)}${unit}`);
      left %= size;
    }
  }
  return parts.join("") || "0s";
}

// "every 1h30m", or "cron 0 9 * * 1-5", with its time zone when it has one.
export function specText(schedule) {
  const parts = [
    ...(schedule.cron || []).map((cron) => `cron ${cron}`),
    ...(schedule.everySeconds || []).map((seconds) => `every ${compact(seconds)}`),
  ];
  const text = parts.join(", ") || "no spec";
  return schedule.timeZone ? `${text} (${schedule.timeZone})` : text;
}

const OVERLAPS = ["skip", "buffer_one", "buffer_all", "cancel_other", "terminate_other", "allow_all"];

// The form's values for a schedule, as the form shows them (the baseline of what counts as changed).
export function editValues(schedule) {
  const every = (schedule.everySeconds || [])[0];
  return {
    kind: every === undefined ? "cron" : "every",
    when: every === undefined ? (schedule.cron || [])[0] || "" : compact(every),
    timeZone: schedule.timeZone || "",
    jitter: schedule.jitterSeconds ? compact(schedule.jitterSeconds) : "",
    overlap: schedule.overlap || "skip",
    note: schedule.note || "",
    message: schedule.message || "",
    maxSteps: schedule.options && schedule.options.maxSteps !== undefined ? String(schedule.options.maxSteps) : "",
  };
}

// The PATCH body: the fields whose values differ from the baseline; an emptied field is null (cleared).
export function changedFields(before, after) {
  const body = {};
  if (after.kind !== before.kind || after.when !== before.when) body[after.kind] = after.when;
  for (const key of ["timeZone", "jitter", "note", "message"]) {
    if (after[key] !== before[key]) body[key] = after[key] === "" ? null : after[key];
  }
  if (after.overlap !== before.overlap) body.overlap = after.overlap;
  if (after.maxSteps !== before.maxSteps) body.maxSteps = after.maxSteps === "" ? null : Number(after.maxSteps);
  return body;
}

const runLink = (runId) => h("a", { href: `#/runs/${encodeURIComponent(runId)}`, class: "run-link" }, visible(runId));

export function schedulesView(root, { signal }) {
  const list = h("div", { class: "schedule-list" });
  const summary = h("p", { class: "muted" });
  const done = h("p", { class: "done", role: "status" });
  const notice = h("p", { class: "form-error", role: "alert" });
  let deleting = null;
  const deleteTitle = h("h2", { id: "delete-schedule-title" });
  const deleteDialog = h("dialog", { class: "confirm", "aria-labelledby": "delete-schedule-title" },
    h("form", { method: "dialog" },
      deleteTitle,
      h("p", {}, "No more runs start from it. Its runs, started or closed, stay as they are."),
      h("div", { class: "actions" },
        h("button", { value: "keep", class: "primary" }, "Keep schedule"),
        h("button", { value: "delete", class: "danger" }, "Delete schedule"))));
  deleteDialog.addEventListener("close", () => {
    const id = deleting;
    deleting = null;
    if (deleteDialog.returnValue === "delete" && id !== null) act(id, "delete");
  });
  // The edit form: one dialog for the page, filled from the schedule it edits.
  let editing = null;
  const field = (label, control, hint) => {
    const id = `edit-${control.name}`;
    control.id = id;
    return h("div", { class: "field" }, h("label", { for: id }, label), control,
      hint ? h("p", { class: "muted hint", id: `${id}-hint` }, hint) : null);
  };
  const controls = {
    kind: h("select", { name: "kind" }, h("option", { value: "every" }, "Every"), h("option", { value: "cron" }, "Cron")),
    when: h("input", { type: "text", name: "when", required: true, autocomplete: "off", "aria-describedby": "edit-when-hint" }),
    timeZone: h("input", { type: "text", name: "timeZone", autocomplete: "off", placeholder: "UTC" }),
    jitter: h("input", { type: "text", name: "jitter", autocomplete: "off", placeholder: "none" }),
    overlap: h("select", { name: "overlap" }, OVERLAPS.map((name) => h("option", { value: name }, name))),
    note: h("input", { type: "text", name: "note", autocomplete: "off" }),
    message: h("textarea", { name: "message", rows: 3, required: true }),
    maxSteps: h("input", { type: "number", name: "maxSteps", min: 1, step: 1, inputmode: "numeric", placeholder: "the agent's" }),
  };
  const editTitle = h("h2", { id: "edit-schedule-title" });
  const editError = h("p", { class: "form-error", role: "alert" });
  const editForm = h("form", { method: "dialog", class: "edit-schedule-form" },
    editTitle,
    field("Repeats", controls.kind),
    field("Interval or cron expression", controls.when, "An interval: 30s, 15m, 1h30m, 7d; or a cron: 0 9 * * 1-5"),
    field("Time zone (IANA)", controls.timeZone),
    field("Jitter", controls.jitter),
    field("When runs overlap", controls.overlap),
    field("Message of each run", controls.message),
    field("Model steps per run at most", controls.maxSteps),
    field("Note", controls.note),
    editError,
    h("div", { class: "actions" },
      h("button", { type: "button", value: "cancel", onclick: () => editDialog.close() }, "Cancel"),
      h("button", { type: "submit", class: "primary", value: "save" }, "Save changes")));
  const editDialog = h("dialog", { class: "edit-schedule", "aria-labelledby": "edit-schedule-title" }, editForm);
  editForm.addEventListener("input", () => { editError.textContent = ""; });
  const formValues = () => Object.fromEntries(Object.entries(controls).map(([key, control]) => [key, control.value]));
  editForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!editing) return;
    const body = changedFields(editing.values, formValues());
    if (!Object.keys(body).length) {
      editDialog.close();
      return;
    }
    editError.textContent = "";
    try {
      await request("PATCH", `/api/schedules/${encodeURIComponent(editing.id)}`, body);
    } catch (error) {
      editError.textContent = error instanceof ApiError ? error.message : String(error);
      const issue = error instanceof ApiError && error.body.issues && error.body.issues[0];
      if (issue) editError.textContent += `: ${issue.field} ${issue.message}`;
      return;
    }
    const id = editing.id;
    editing = null;
    editDialog.close();
    notice.textContent = "";
    done.textContent = `Updated ${id}.`;
    await load();
    focusEdit(id);
  });
  // Back on the card's Edit button once the form closes, however it closes.
  const focusEdit = (id) =>
    [...list.children].find((el) => el.dataset.scheduleId === id)?.querySelector('[data-action="edit"]')?.focus();
  editDialog.addEventListener("close", () => {
    if (!editing) return;
    const id = editing.id;
    editing = null;
    focusEdit(id);
    load().catch(() => {});
  });
  function openEdit(schedule) {
    const values = editValues(schedule);
    editing = { id: schedule.id, values };
    for (const [key, control] of Object.entries(controls)) control.value = values[key];
    editError.textContent = "";
    editTitle.replaceChildren("Edit schedule ", visible(schedule.id));
    editDialog.showModal();
  }

  root.replaceChildren(
    h("section", { class: "schedules", "aria-labelledby": "schedules-title" },
      h("div", { class: "title-row" }, h("h1", { id: "schedules-title" }, "Schedules"), summary),
      done,
      notice,
      list,
      deleteDialog,
      editDialog),
  );

  async function act(id, action) {
    notice.textContent = "";
    done.textContent = "";
    const path = `/api/schedules/${encodeURIComponent(id)}`;
    try {
      if (action === "delete") await request("DELETE", path);
      else await post(`${path}/${action}`);
      done.textContent = { pause: `Paused ${id}.`, unpause: `Unpaused ${id}.`, trigger: `Started a run of ${id}.`, delete: `Deleted ${id}.` }[action];
    } catch (error) {
      notice.textContent = error instanceof ApiError ? error.message : String(error);
    }
    await load();
  }

  function card(schedule) {
    const titleId = `schedule-${schedule.id}`;
    const next = (schedule.nextRuns || []).slice(0, SHOWN_NEXT);
    const recent = (schedule.recentRuns || []).slice(-SHOWN_RECENT).reverse(); // newest first
    const running = new Set(schedule.running || []);
    const state = schedule.paused ? "paused" : "active";
    return h("article", { class: "item schedule", dataset: { scheduleId: schedule.id, state }, "aria-labelledby": titleId },
      h("header", { class: "schedule-head" },
        h("h2", { id: titleId, class: "schedule-id" }, visible(schedule.id)),
        h("span", { class: `status ${state}` }, state),
        h("span", { class: "muted" }, "agent ", h("code", {}, visible(schedule.agentId || "?")))),
      h("p", { class: "spec" }, visible(specText(schedule)),
        schedule.jitterSeconds ? h("span", { class: "muted" }, ` · jitter ${compact(schedule.jitterSeconds)}`) : null,
        h("span", { class: "muted" }, ` · overlap ${schedule.overlap}`),
        h("span", { class: "muted" }, ` · ${schedule.runsStarted} run${schedule.runsStarted === 1 ? "" : "s"} started`)),
      schedule.paused && schedule.note ? h("p", { class: "note muted" }, "Note: ", visible(schedule.note)) : null,
      h("div", { class: "schedule-runs" },
        h("div", {},
          h("h3", {}, "Next runs"),
          schedule.paused
            ? h("p", { class: "muted next-none" }, "None while paused.")
            : next.length
              ? h("ol", { class: "next-runs" }, next.map((at) => h("li", { title: at }, when(at))))
              : h("p", { class: "muted next-none" }, "None due.")),
        h("div", {},
          h("h3", {}, "Recent runs"),
          recent.length
            ? h("ol", { class: "recent-runs" }, recent.map((run) =>
              h("li", { dataset: { runId: run.runId } }, runLink(run.runId),
                h("span", { class: "muted", title: run.scheduledAt }, ` due ${when(run.scheduledAt)}`),
                running.has(run.runId) ? h("span", { class: "status running" }, "running") : null)))
            : h("p", { class: "muted recent-none" }, "No runs yet."))),
      schedule.message ? h("p", { class: "schedule-message muted" }, "Asks: ", visible(schedule.message)) : null,
      h("div", { class: "actions" },
        h("button", { type: "button", dataset: { action: "edit" }, onclick: () => openEdit(schedule), "aria-describedby": titleId }, "Edit…"),
        schedule.paused
          ? h("button", { type: "button", dataset: { action: "state" }, onclick: () => act(schedule.id, "unpause"), "aria-describedby": titleId }, "Unpause")
          : h("button", { type: "button", dataset: { action: "state" }, onclick: () => act(schedule.id, "pause"), "aria-describedby": titleId }, "Pause"),
        h("button", { type: "button", dataset: { action: "trigger" }, onclick: () => act(schedule.id, "trigger"), "aria-describedby": titleId }, "Run now"),
        h("button", { type: "button", class: "danger", dataset: { action: "delete" }, "aria-describedby": titleId, onclick: () => {
          deleting = schedule.id;
          deleteTitle.replaceChildren("Delete schedule ", visible(schedule.id), "?");
          deleteDialog.showModal();
        } }, "Delete…")));
  }

  let sequence = 0;
  async function load() {
    if (editing) return; // the form keeps the schedule it was opened on; the page catches up when it closes
    const mine = ++sequence;
    const schedules = await get("/api/schedules");
    if (signal.aborted || mine !== sequence) return;
    // A card whose button has the focus is rebuilt with the same button focused (Pause and Unpause are one place),
    // so keyboard users keep their place.
    const focused = document.activeElement?.closest?.(".schedule");
    const focusedAction = focused ? document.activeElement.dataset.action : null;
    const focusedId = focused?.dataset.scheduleId;
    list.replaceChildren(...schedules.map(card));
    if (!schedules.length) list.append(h("p", { class: "muted empty" }, "No schedules. Create one with app.schedule(...), tempo-agents schedule create or POST /api/schedules."));
    if (focusedId !== undefined) {
      const again = [...list.children].find((el) => el.dataset.scheduleId === focusedId);
      const button = again && [...again.querySelectorAll("button")].find((b) => b.dataset.action === focusedAction);
      button?.focus();
    }
    summary.textContent = `${schedules.length} schedule${schedules.length === 1 ? "" : "s"}`;
    root.querySelector(".schedules").dataset.loadedAt = String(performance.now());
  }

  const refresh = setInterval(() => load().catch(() => {}), 5000);
  signal.addEventListener("abort", () => clearInterval(refresh));
  return load();
}
