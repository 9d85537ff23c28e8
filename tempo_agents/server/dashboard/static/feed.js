// The dashboard's live feed (/api/dashboard/events), one connection shared by every view.

import { follow } from "./api.js";

const listeners = new Set();
let started = false;

function setLive(state) {
  const el = document.getElementById("live");
  if (!el) return;
  el.dataset.state = state;
  el.textContent = state === "live" ? "● live" : state === "reconnecting" ? "○ reconnecting" : "";
}

export const feed = {
  start() {
    if (started) return;
    started = true;
    follow("/api/dashboard/events", (event) => {
      for (const listener of listeners) listener(event);
    }, { onState: setLive }).catch(() => setLive("error"));
  },
  on(listener, signal) {
    listeners.add(listener);
    signal?.addEventListener("abort", () => listeners.delete(listener));
  },
};
