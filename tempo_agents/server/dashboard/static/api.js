// Talking to the HTTP API: the bearer token (kept in sessionStorage) or the provider's sign-in session (an
// HttpOnly cookie the browser sends itself), JSON requests, and SSE over fetch (EventSource cannot send an
// Authorization header), reconnecting with Last-Event-ID.

const TOKEN_KEY = "tempo-agents-token";
let askToken = null;
let providerSignIn = false;

// The server signs people in through its identity provider: a 401 renews the session with its refresh token
// (POST /auth/refresh), or sends the person to sign in again and back to this page.
export function useProviderSignIn() {
  providerSignIn = true;
}

export function signInAgain() {
  location.assign(`/auth/login?next=${encodeURIComponent(location.pathname + location.hash)}`);
  return new Promise(() => {}); // the page is leaving
}

export function onTokenNeeded(handler) {
  askToken = handler;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

function headers(extra = {}) {
  const result = { ...extra };
  const t = token();
  if (t) result.Authorization = `Bearer ${t}`;
  return result;
}

async function authorised(doFetch) {
  let renewed = false;
  for (;;) {
    const response = await doFetch();
    if (response.status === 401 && providerSignIn && !token()) {
      if (!renewed && (await fetch("/auth/refresh", { method: "POST" })).ok) {
        renewed = true;
        continue;
      }
      await signInAgain();
    }
    if (response.status !== 401 || !askToken) return response;
    const body = await response.json().catch(() => ({}));
    await askToken(token() ? body.error || "Invalid or expired token" : "");
  }
}

export async function request(method, path, body) {
  const response = await authorised(() =>
    fetch(path, {
      method,
      headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const get = (path) => request("GET", path);
export const post = (path, body) => request("POST", path, body ?? {});

export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

// The tabs of one browser share their streams through one SharedWorker (streams_worker.js): a browser opens at
// most six connections to a server over HTTP/1.1, so tabs that each held their own would leave the later ones
// waiting for a connection. The tab holds a Web Lock for as long as it lives, by which the worker learns that it
// is gone. Where the browser has no SharedWorker or no Web Locks, each tab follows its streams itself.
const STREAMS_WORKER = "/dashboard/assets/streams_worker.js";
let streamsPort;
let lastFollow = 0;
const following = new Map(); // subscription id -> handler of the worker's messages

function sharedStreams() {
  if (streamsPort !== undefined) return streamsPort;
  streamsPort = null;
  if (typeof SharedWorker !== "function" || !navigator.locks || !crypto.randomUUID) return null;
  try {
    const tab = `tempo-agents-tab-${crypto.randomUUID()}`;
    const worker = new SharedWorker(STREAMS_WORKER, { name: "tempo-agents-streams" });
    worker.port.onmessage = ({ data }) => following.get(data.id)?.(data);
    worker.port.start();
    navigator.locks.request(tab, () => {
      worker.port.postMessage({ type: "hello", tab }); // once held: the worker's request for it then waits
      return new Promise(() => {}); // held until the tab is gone
    });
    const sight = () => worker.port.postMessage({ type: "sight", hidden: document.hidden }); // out of sight: kept
    sight();
    document.addEventListener("visibilitychange", sight);
    addEventListener("pagehide", (event) => {
      if (!event.persisted) worker.port.postMessage({ type: "closing" }); // kept for going back: still alive
    });
    streamsPort = worker.port;
  } catch {
    streamsPort = null;
  }
  return streamsPort;
}

// Follows an SSE route until it sends [DONE] or `signal` aborts; reconnects (with Last-Event-ID) when cut. The
// stream is shared with the browser's other tabs that follow the same route (sharedStreams).
export async function follow(path, onEvent, { signal, onState } = {}) {
  const port = sharedStreams();
  if (port === null) return followHere(path, onEvent, { signal, onState });
  if (signal?.aborted) return;
  const id = ++lastFollow;
  let lastId = null;
  const outcome = await new Promise((resolve) => {
    following.set(id, (message) => {
      if (message.type === "event") {
        if (message.eventId !== null) lastId = message.eventId;
        onEvent(JSON.parse(message.data), message.eventId === null ? null : Number(message.eventId));
      } else if (message.type === "state") {
        onState?.(message.state);
        if (message.state === "done") resolve(null);
      } else if (message.type === "failed") resolve(message);
    });
    signal?.addEventListener("abort", () => {
      port.postMessage({ type: "stop", id });
      resolve(null);
    });
    const t = token();
    port.postMessage({ type: "follow", id, path, authorization: t ? `Bearer ${t}` : null });
  });
  following.delete(id);
  if (outcome === null) return;
  if (outcome.status === 401) return followHere(path, onEvent, { signal, onState, lastId }); // sign in, in this tab
  onState?.("error");
  throw new ApiError(outcome.status, outcome.body);
}

// Follows an SSE route from this tab's own connection (see follow).
async function followHere(path, onEvent, { signal, onState, lastId = null } = {}) {
  while (!signal?.aborted) {
    try {
      const extra = { Accept: "text/event-stream" };
      if (lastId !== null) extra["Last-Event-ID"] = lastId;
      const response = await authorised(() => fetch(path, { headers: headers(extra), signal }));
      if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => ({})));
      onState?.("live");
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id = null;
          let data = null;
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) id = line.slice(4);
            else if (line.startsWith("data: ")) data = line.slice(6);
          }
          if (data === null) continue;
          if (data === "[DONE]") {
            onState?.("done");
            return;
          }
          if (id !== null) lastId = id;
          onEvent(JSON.parse(data), id === null ? null : Number(id));
        }
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
        onState?.("error");
        throw error;
      }
    }
    onState?.("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
