// The answer forms of a waiting call: an ask_user question, an approval, or a form generated from the call's
// resume JSON schema. Every form posts to /api/inbox/answer; the server's validation errors are shown beside
// their fields and the form keeps what was typed.

import { ApiError, get, post } from "./api.js";
import { fieldId, h, jsonBlock, visible, when } from "./dom.js";

// ---- schema → fields -------------------------------------------------------------------------------------

function resolve(schema, root) {
  let current = schema || {};
  for (let i = 0; i < 20 && current.$ref; i += 1) {
    const path = current.$ref.replace(/^#\//, "").split("/");
    let target = root;
    for (const part of path) target = target?.[part];
    current = { ...target, ...Object.fromEntries(Object.entries(current).filter(([k]) => k !== "$ref")) };
  }
  const options = current.anyOf || current.oneOf;
  if (options) {
    const nonNull = options.filter((option) => resolve(option, root).type !== "null");
    if (nonNull.length === 1) {
      const { anyOf: _a, oneOf: _o, ...rest } = current;
      return { ...resolve(nonNull[0], root), ...rest, nullable: true };
    }
  }
  if (Array.isArray(current.type)) {
    const types = current.type.filter((t) => t !== "null");
    return { ...current, type: types[0], nullable: current.type.includes("null") };
  }
  return current;
}

function pathOf(path) {
  return path.join(".");
}

// A field editor: {el, read() → value or undefined (left empty)}.
function editor(schemaIn, root, path, label, required) {
  const schema = resolve(schemaIn, root);
  const id = fieldId("f");
  const title = schema.title || label;
  const labelClass = required ? "required" : null; // marked by the stylesheet; controls get aria-required
  const help = schema.description ? h("small", { class: "help" }, schema.description) : null;
  const error = h("span", { class: "field-error", role: "alert" });
  const wrap = (control, labelFirst = true) =>
    h(
      "div",
      { class: labelFirst ? "field" : "field flag", dataset: { path: pathOf(path) } },
      labelFirst ? h("label", { for: id, class: labelClass }, title) : null,
      control,
      labelFirst ? null : h("label", { for: id, class: labelClass }, title),
      help,
      error,
    );

  const need = (control) => {
    if (required) control.setAttribute("aria-required", "true");
    return control;
  };

  if (schema.type === "object" || schema.properties) {
    const requiredNames = new Set(schema.required || []);
    const children = Object.entries(schema.properties || {}).map(([name, sub]) => [
      name,
      editor(sub, root, [...path, name], name, requiredNames.has(name)),
    ]);
    const el = h(
      "fieldset",
      { class: "field group", dataset: { path: pathOf(path) } },
      path.length ? h("legend", { class: labelClass }, title) : null,
      children.map(([, child]) => child.el),
      error,
    );
    return {
      el,
      read() {
        const value = {};
        for (const [name, child] of children) {
          const v = child.read();
          if (v !== undefined) value[name] = v;
        }
        return value;
      },
    };
  }
  if (schema.type === "array") {
    const items = [];
    const list = h("ol", { class: "array-items" });
    const add = () => {
      const index = items.length;
      const child = editor(schema.items || {}, root, [...path, index], `${title} ${index + 1}`, true);
      const entry = h("li", {}, child.el);
      const remove = h("button", { type: "button", class: "small", "aria-label": `Remove ${title} ${index + 1}` }, "Remove");
      remove.addEventListener("click", () => {
        const at = items.indexOf(child);
        if (at >= 0) items.splice(at, 1);
        entry.remove();
      });
      entry.append(remove);
      items.push(child);
      list.append(entry);
    };
    const addButton = h("button", { type: "button", class: "small", onclick: add }, `Add ${title}`);
    for (let i = 0; i < (schema.minItems || 0); i += 1) add();
    const el = h("fieldset", { class: "field group", dataset: { path: pathOf(path) } }, h("legend", { class: labelClass }, title), list, addButton, help, error);
    return { el, read: () => items.map((child) => child.read()) };
  }
  if (schema.enum) {
    const select = h("select", { id, name: pathOf(path) },
      required ? null : h("option", { value: "" }, "—"),
      schema.enum.map((v, i) => h("option", { value: String(i) }, String(v))));
    return { el: wrap(need(select)), read: () => (select.value === "" ? undefined : schema.enum[Number(select.value)]) };
  }
  if (schema.type === "boolean") {
    const box = h("input", { id, type: "checkbox", name: pathOf(path) });
    if (schema.default === true) box.checked = true;
    return { el: wrap(need(box), false), read: () => box.checked };
  }
  if (schema.type === "number" || schema.type === "integer") {
    const input = h("input", { id, type: "text", inputmode: "decimal", name: pathOf(path) });
    if (schema.default !== undefined && schema.default !== null) input.value = String(schema.default);
    return {
      el: wrap(need(input)),
      read() {
        const text = input.value.trim();
        if (text === "") return undefined;
        const number = Number(text);
        return Number.isNaN(number) ? text : number; // sent as typed: the server says what is wrong
      },
    };
  }
  if (schema.type === "string") {
    const long = (schema.maxLength || 0) > 200 || schema.format === "textarea";
    const input = long ? h("textarea", { id, name: pathOf(path), rows: 3 }) : h("input", { id, type: "text", name: pathOf(path) });
    if (schema.default !== undefined && schema.default !== null) input.value = String(schema.default);
    return { el: wrap(need(input)), read: () => (input.value === "" && !required ? undefined : input.value) };
  }
  // Anything else: JSON typed by hand.
  const area = h("textarea", { id, name: pathOf(path), rows: 3, placeholder: "JSON" });
  return {
    el: wrap(area),
    read() {
      if (area.value.trim() === "") return undefined;
      try {
        return JSON.parse(area.value);
      } catch {
        return area.value;
      }
    },
  };
}

// ---- submitting ------------------------------------------------------------------------------------------

function showErrors(form, error) {
  for (const el of form.querySelectorAll(".field-error")) el.textContent = "";
  form.querySelector(".form-error").textContent = "";
  const details = error.body?.validationErrors;
  let placed = false;
  if (details && details.fields) {
    for (const [path, found] of Object.entries(details.fields)) {
      const field = form.querySelector(`[data-path="${CSS.escape(path)}"] > .field-error`);
      if (field) {
        field.textContent = (found.errors || []).join("; ");
        placed = true;
      }
    }
  }
  const rootErrors = details?.errors || [];
  form.querySelector(".form-error").textContent = rootErrors.length ? rootErrors.join("; ") : placed ? "" : error.message;
}

function submitter(item, form, onAnswered) {
  return async (answer) => {
    const buttons = form.querySelectorAll("button, input, select, textarea");
    for (const el of buttons) el.disabled = true;
    form.setAttribute("aria-busy", "true");
    try {
      const done = await post("/api/inbox/answer", { runId: item.runId, toolCallId: item.toolCallId, ...answer });
      form.closest("[data-item]")?.setAttribute("data-answered", "true");
      form.replaceChildren(h("p", { class: "answered", role: "status" }, "Answered", done.answeredBy ? ` as ${done.answeredBy}` : ""));
      onAnswered?.(item, done);
    } catch (error) {
      for (const el of buttons) el.disabled = false;
      if (error instanceof ApiError && error.status === 409 && error.body.code === "ALREADY_ANSWERED") {
        markAnswered(form, error.body.answeredBy, error.body.answer);
      } else if (error instanceof ApiError) {
        showErrors(form, error);
      } else {
        form.querySelector(".form-error").textContent = String(error);
      }
    } finally {
      form.removeAttribute("aria-busy");
    }
  };
}

const WORDS_LIMIT = 300;

// What an answer said, in a few words: approved, declined (and why), or the answer itself.
export function answerWords(answer) {
  if (!answer) return "";
  const action = answer.action;
  const data = answer.data;
  const approved = data && typeof data === "object" && typeof data.approved === "boolean" ? data.approved : null;
  if (action === "approve" || approved === true) return "approved";
  if (action === "decline" || approved === false) return answer.reason ? `declined (“${answer.reason}”)` : "declined";
  if (action === "expire") return "expired";
  if (data === undefined || data === null) return ""; // not known here (too large to send along): who is enough
  const text = typeof data === "string" ? `“${data}”` : Array.isArray(data) && data.every((v) => typeof v === "string") ? data.map((v) => `“${v}”`).join(", ") : JSON.stringify(data);
  return text.length > WORDS_LIMIT ? `${text.slice(0, WORDS_LIMIT)} …` : text;
}

// Marks a form whose call someone else answered, for good (the card stays until dismissed): who answered and
// what, and when; what was typed here stays, nothing can be sent.
export function markAnswered(form, answeredBy, answer = null) {
  for (const el of form.querySelectorAll("button, input, select, textarea")) el.disabled = true;
  const card = form.closest("[data-item]");
  card?.setAttribute("data-answered", "elsewhere");
  const note = form.querySelector(".form-error");
  const words = answerWords(answer);
  note.replaceChildren(visible(`already answered by ${answeredBy || "someone else"}${words ? `: ${words}` : ""}`));
  if (answer?.answeredAt) note.title = `answered ${when(answer.answeredAt)}`;
  note.classList.add("taken");
  note.setAttribute("role", "alert");
  if (card && !card.querySelector(".dismiss")) {
    const dismiss = h("button", { type: "button", class: "small dismiss" }, "Dismiss");
    dismiss.addEventListener("click", () => {
      const next = card.nextElementSibling || card.previousElementSibling;
      card.remove();
      next?.querySelector("button:not(:disabled), input:not(:disabled), textarea:not(:disabled), a")?.focus();
    });
    note.after(dismiss);
  }
}

function questionForm(item, form, send) {
  const payload = item.suspendPayload || {};
  const options = payload.options || [];
  form.append(h("p", { class: "question-text" }, visible(payload.question || "")));
  if (options.length && (payload.selectionMode || "single_select") === "single_select") {
    form.append(
      h("div", { class: "choices", role: "group", "aria-label": "Choose one" },
        options.map((option) =>
          h("button", { type: "button", class: "choice", title: option.description || null,
            onclick: () => send({ action: "resume", resumeData: option.label }) }, visible(option.label)))),
    );
    return;
  }
  if (options.length) {
    const boxes = options.map((option) => {
      const id = fieldId("opt");
      const box = h("input", { id, type: "checkbox", value: option.label });
      return [box, h("div", { class: "check" }, box, h("label", { for: id }, visible(option.label)), option.description ? h("small", { class: "help" }, option.description) : null)];
    });
    form.append(h("fieldset", { class: "choices" }, h("legend", {}, "Choose any"), boxes.map(([, row]) => row)));
    form.append(h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Send")));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      send({ action: "resume", resumeData: boxes.filter(([box]) => box.checked).map(([box]) => box.value) });
    });
    return;
  }
  const id = fieldId("answer");
  const area = h("textarea", { id, rows: 2, name: "answer" });
  form.append(h("div", { class: "field", dataset: { path: "" } }, h("label", { for: id }, "Your answer"), area, h("span", { class: "field-error", role: "alert" })));
  form.append(h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Send")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send({ action: "resume", resumeData: area.value });
  });
}

function approvalForm(item, form, send) {
  // A call inside a sub-agent waits on the parent's agent-<key> call: its payload names the child's tool and args.
  const inner = /^agent-/.test(item.toolName || "") && item.suspendPayload?.toolName ? item.suspendPayload : null;
  form.append(
    inner
      ? h("p", {}, "Run ", h("code", {}, visible(inner.toolName)), " (in ", h("code", {}, item.toolName), ") with these arguments?")
      : h("p", {}, "Run ", h("code", {}, visible(item.toolName)), " with these arguments?"),
    jsonBlock(inner ? inner.args : item.args, { "aria-label": "Arguments" }),
  );
  const edits = inner || !item.argsEditable ? null : argsEditor(item); // after the buttons: the reason stays first
  const id = fieldId("reason");
  const reason = h("input", { id, type: "text", name: "reason", placeholder: "Why (sent to the agent when declining)" });
  form.addEventListener("submit", (event) => event.preventDefault()); // Enter in the reason decides nothing
  form.append(h("div", { class: "field" }, h("label", { for: id }, "Reason (optional)"), reason));
  const approve = () => {
    const edited = edits ? edits.read() : { ok: true, args: undefined };
    if (!edited.ok) {
      form.querySelector(".form-error").textContent = edited.error;
      return;
    }
    send(edited.args === undefined ? { action: "approve" } : { action: "approve", args: edited.args });
  };
  form.append(
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", onclick: approve }, "Approve"),
      h("button", { type: "button", class: "danger", onclick: () => send({ action: "decline", reason: reason.value || null }) }, "Decline")),
  );
  if (edits) form.append(edits.el);
}

// Every leaf of a JSON value by its path (`a.b[0]`), as JSON text: what a diff compares.
function leaves(value, path = "", found = new Map()) {
  if (value && typeof value === "object" && Object.keys(value).length) {
    for (const [key, inner] of Object.entries(value)) {
      leaves(inner, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, found);
    }
  } else {
    found.set(path || "(arguments)", JSON.stringify(value));
  }
  return found;
}

// The changes from `before` to `after`, one line per changed leaf: removed, added or changed.
export function argsDiff(before, after) {
  const old = leaves(before);
  const now = leaves(after);
  const rows = [];
  for (const [path, was] of old) {
    if (!now.has(path)) rows.push(h("li", { class: "removed" }, h("code", {}, visible(path)), ": ", h("del", {}, visible(was))));
    else if (now.get(path) !== was) {
      rows.push(h("li", { class: "changed" }, h("code", {}, visible(path)), ": ", h("del", {}, visible(was)), " → ", h("ins", {}, visible(now.get(path)))));
    }
  }
  for (const [path, is] of now) {
    if (!old.has(path)) rows.push(h("li", { class: "added" }, h("code", {}, visible(path)), ": ", h("ins", {}, visible(is))));
  }
  return rows;
}

// Edit, then approve: the arguments as JSON, and the diff against what the model asked for as they are edited.
function argsEditor(item) {
  const id = fieldId("edited-args");
  const original = JSON.stringify(item.args ?? null, null, 2);
  const area = h("textarea", { id, name: "args", rows: String(Math.min(12, original.split("\n").length + 1)), spellcheck: "false" });
  area.value = original;
  const diff = h("ul", { class: "args-diff", "aria-label": "Changes to the arguments", "aria-live": "polite" });
  const parsed = () => {
    try {
      return { ok: true, value: JSON.parse(area.value) };
    } catch (error) {
      return { ok: false, error: `The edited arguments are not JSON: ${error.message}` };
    }
  };
  area.addEventListener("input", () => {
    const now = parsed();
    diff.replaceChildren(...(now.ok ? argsDiff(item.args ?? null, now.value) : [h("li", { class: "invalid" }, now.error)]));
  });
  const el = h("details", { class: "edit-args" },
    h("summary", {}, "Edit arguments"),
    h("div", { class: "field" }, h("label", { for: id }, "Arguments to approve (JSON)"), area),
    diff);
  return {
    el,
    read() {
      const now = parsed();
      if (!now.ok) return now;
      const changed = JSON.stringify(now.value) !== JSON.stringify(item.args ?? null);
      return { ok: true, args: changed ? now.value : undefined };
    },
  };
}

function schemaForm(item, form, send) {
  let schema = {};
  try {
    schema = item.resumeSchema ? JSON.parse(item.resumeSchema) : {};
  } catch {
    schema = {};
  }
  const root = editor(schema, schema, [], "Answer", true);
  form.append(root.el, h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Resume")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send({ action: "resume", resumeData: root.read() ?? null });
  });
}

// ---- a run waiting for its budget ------------------------------------------------------------------------

// The run's budget with the limit that was reached set to `limit` (the answer replaces the run's whole budget).
function raisedBudget(budget, stop, limit) {
  const metric = stop.metric === "cost_usd" ? "costUsd" : "tokens";
  const raised = JSON.parse(JSON.stringify(budget || {}));
  if (stop.scope === "run") raised.run = { ...(raised.run || {}), [metric]: limit };
  else {
    raised[stop.scope] = { ...(raised[stop.scope] || {}) };
    raised[stop.scope][stop.period] = { ...(raised[stop.scope][stop.period] || {}), [metric]: limit };
  }
  return raised;
}

function budgetForm(item, form, onAnswered) {
  const stop = item.suspendPayload || {};
  const cost = stop.metric === "cost_usd";
  const unit = cost ? "US dollars" : "tokens";
  const period = stop.period === "total" ? "" : ` for ${stop.periodKey}`;
  form.append(h("p", { class: "budget-text" }, visible(`The ${stop.scope} budget${period} is reached: ${stop.used} of ${stop.limit} ${unit} used.`)));
  const id = fieldId("limit");
  const input = h("input", { id, type: "text", inputmode: "decimal", name: "limit", value: String(stop.limit * 2) });
  const error = h("span", { class: "field-error", role: "alert" });
  form.append(h("div", { class: "field", dataset: { path: "budget" } }, h("label", { for: id }, `New limit (${unit})`), input, error));
  form.addEventListener("submit", (event) => event.preventDefault());
  const send = async (action) => {
    const limit = Number(input.value.trim());
    if (action === "raise" && (input.value.trim() === "" || !Number.isFinite(limit) || limit < 0 || (!cost && !Number.isInteger(limit)))) {
      error.textContent = cost ? "a number of dollars, 0 or more" : "a whole number of tokens, 0 or more";
      return;
    }
    error.textContent = "";
    const controls = form.querySelectorAll("button, input");
    for (const el of controls) el.disabled = true;
    form.setAttribute("aria-busy", "true");
    const path = `/api/runs/${encodeURIComponent(item.runId)}/budget`;
    try {
      const body = { action };
      if (action === "raise") body.budget = raisedBudget((await get(path)).budget, stop, limit);
      await post(path, body);
      form.closest("[data-item]")?.setAttribute("data-answered", "true");
      form.replaceChildren(h("p", { class: "answered", role: "status" }, action === "raise" ? "Budget raised" : "Run ended"));
      onAnswered?.(item, {});
    } catch (failure) {
      for (const el of controls) el.disabled = false;
      form.querySelector(".form-error").textContent = failure instanceof ApiError ? failure.message : String(failure);
    } finally {
      form.removeAttribute("aria-busy");
    }
  };
  form.append(h("div", { class: "actions" },
    h("button", { type: "button", class: "primary", onclick: () => send("raise") }, "Raise limit"),
    h("button", { type: "button", class: "danger", onclick: () => send("end") }, "End run")));
}

// The form answering `item` (an inbox item or a run's pending call with its runId).
export function answerForm(item, { onAnswered } = {}) {
  // Named after the call (and its run): every answer form is a landmark of its own, told apart by its name.
  const name = `Answer ${item.toolName} (call ${item.toolCallId}${item.runId ? ` of run ${item.runId}` : ""})`;
  const form = h("form", { class: "answer", novalidate: true, "aria-label": name });
  const send = submitter(item, form, onAnswered);
  if (item.kind === "budget") budgetForm(item, form, onAnswered);
  else if (item.kind === "approval" || item.requiresApproval) approvalForm(item, form, send);
  else if (item.kind === "question" || item.toolId === "ask_user") questionForm(item, form, send);
  else schemaForm(item, form, send);
  form.append(h("p", { class: "form-error", role: "alert" }));
  form.addEventListener("input", () => (form.dataset.dirty = "true"));
  return form;
}
