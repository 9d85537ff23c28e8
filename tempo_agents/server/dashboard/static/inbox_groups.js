// Groups of inbox cards: identical waiting calls (same agent, tool, question or arguments), or every call of one
// agent or one tool. A group's cards stand together where its first card stands; the first shows the group's size
// and its decision, the others are folded behind "Show the other N" until the person opens the group. The list
// stays flat (every card a child of the list), so finding, answering and focusing cards work as without groups.

import { h } from "./dom.js";

export const GROUPINGS = { alike: "identical calls", agent: "agent", tool: "tool", none: "nothing" };

// What makes two cards alike: one agent, one tool, one kind, and the same question (payload) and arguments.
export function alikeKey(item) {
  return JSON.stringify([item.agentId ?? null, item.toolName ?? null, item.kind, item.suspendPayload ?? null, item.args ?? null]);
}

function keyOf(el, by) {
  if (by === "agent") return `agent ${el.dataset.agentId}`;
  if (by === "tool") return `tool ${el.dataset.toolName}`;
  if (by === "alike") return `alike ${el.dataset.alike}`;
  return null;
}

// `els` with the cards of each group together, where the group's first card is (the rest keep their order).
export function together(els, by) {
  const groups = new Map();
  for (const el of els) {
    const key = keyOf(el, by) ?? `card ${el.dataset.item}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(el);
  }
  return [...groups.values()].flat();
}

function headText(first, count, by) {
  if (by === "agent") return `${count} waiting for ${first.dataset.agentName}`;
  if (by === "tool") return `${count} waiting on ${first.dataset.toolName}`;
  return `${count} waiting alike: the same ${first.dataset.kind === "approval" ? "call" : "question"} from ${first.dataset.agentName}`;
}

// Marks the groups of `list`'s cards: a head on each group's first card, the others folded unless the group's key
// is in `open`. Cards answered (here or elsewhere) stand alone. `toggled(key)` is called when a head's button is
// pressed.
export function regroup(list, by, open, toggled) {
  const groups = new Map();
  for (const el of list.children) {
    if (!el.matches("article.item")) continue;
    el.querySelector(":scope > .group-head")?.remove();
    el.hidden = false;
    delete el.dataset.group;
    const key = el.dataset.answered ? null : keyOf(el, by);
    if (key === null) continue;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(el);
  }
  for (const [key, els] of groups) {
    if (els.length < 2) continue;
    const opened = open.has(key);
    els.forEach((el, n) => {
      el.dataset.group = key;
      el.hidden = n > 0 && !opened;
    });
    const button = h("button", { type: "button", class: "small", "aria-expanded": String(opened), onclick: () => toggled(key) },
      opened ? "Fold" : `Show the other ${els.length - 1}`);
    els[0].prepend(h("div", { class: "group-head" }, h("strong", {}, headText(els[0], els.length, by)), button));
  }
}
