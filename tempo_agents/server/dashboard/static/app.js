// The dashboard's entry: sign-in when the server has tokens, the live feed, and the views by location hash
// (#/inbox, #/runs, #/runs/<runId>, #/compare/<runA>/<runB>, #/schedules, #/audit,
// #/threads/<threadId>?resourceId=<resourceId>).

import { ApiError, get, onTokenNeeded, setToken, token, useProviderSignIn } from "./api.js";
import { answeredView } from "./answered.js";
import { auditView } from "./audit.js";
import { compareView } from "./compare.js";
import { h } from "./dom.js";
import { feed } from "./feed.js";
import { inboxView } from "./inbox.js";
import { runView } from "./run.js";
import { runsView } from "./runs.js";
import { schedulesView } from "./schedules.js";
import { threadView } from "./thread.js";

const dialog = document.getElementById("token-dialog");
const tokenForm = document.getElementById("token-form");
const tokenInput = document.getElementById("token-input");
const tokenError = document.getElementById("token-error");
let waiting = null;

onTokenNeeded((message) => {
  if (!waiting) {
    waiting = new Promise((resolve) => {
      tokenError.textContent = message || "";
      tokenInput.value = "";
      dialog.showModal();
      tokenInput.focus();
      tokenForm.onsubmit = () => {
        setToken(tokenInput.value.trim());
        waiting = null;
        resolve();
      };
    });
  }
  return waiting;
});
dialog.addEventListener("cancel", (event) => event.preventDefault()); // nothing works without a token

let session = { principal: null, temporalUiUrl: null, namespace: null };
let current = null;

function route() {
  current?.abort();
  current = new AbortController();
  const signal = current.signal;
  const main = document.getElementById("main");
  const [hash, search] = location.hash.replace(/^#\/?/, "").split("?");
  const [section, ...rest] = hash.split("/");
  for (const link of document.querySelectorAll("nav a[data-section]")) {
    if (link.dataset.section === (section === "compare" || section === "threads" ? "runs" : section || "inbox")) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  let shown;
  if (section === "runs" && rest.length) shown = runView(main, decodeURIComponent(rest.join("/")), { signal, session });
  else if (section === "runs") shown = runsView(main, { signal });
  else if (section === "compare" && rest.length === 2) shown = compareView(main, decodeURIComponent(rest[0]), decodeURIComponent(rest[1]), { signal });
  else if (section === "threads" && rest.length) {
    const resourceId = new URLSearchParams(search || "").get("resourceId") || "";
    shown = threadView(main, decodeURIComponent(rest.join("/")), resourceId, { signal });
  } else if (section === "answered") shown = answeredView(main, { signal });
  else if (section === "schedules") shown = schedulesView(main, { signal });
  else if (section === "audit") shown = auditView(main, { signal });
  else shown = inboxView(main, { signal });
  Promise.resolve(shown).catch((error) => {
    if (signal.aborted) return;
    main.append(h("p", { class: "error", role: "alert" }, error instanceof ApiError ? error.message : String(error)));
  });
}

// Whether the server signs people in through its identity provider (GET /auth/session answers only then).
async function providerSession() {
  try {
    const answer = await fetch("/auth/session");
    return answer.ok ? await answer.json() : null;
  } catch {
    return null;
  }
}

async function start() {
  const provider = await providerSession();
  if (provider?.signIn) useProviderSignIn();
  session = await get("/api/dashboard/session");
  document.getElementById("principal").textContent = session.principal ? `Signed in as ${session.principal}` : "";
  const signOut = document.getElementById("sign-out");
  const withProvider = Boolean(provider?.signIn && !token());
  signOut.hidden = !token() && !withProvider;
  signOut.addEventListener("click", async () => {
    if (withProvider) {
      // the session cookie is cleared by the server; then the provider's own sign-out page, if it has one
      const answer = await fetch("/auth/logout", { method: "POST" }).then((r) => r.json()).catch(() => ({}));
      location.assign(answer.redirect || "/");
      return;
    }
    setToken(null); // forgotten by this browser session; the next request asks for a token again
    location.reload();
  });
  feed.start();
  window.addEventListener("hashchange", route);
  route();
}

start();
