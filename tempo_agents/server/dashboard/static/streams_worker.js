// The dashboard's streams, shared by every tab of one browser (a SharedWorker). A browser opens at most six
// connections to one server over HTTP/1.1, and every open tab holds the live feed and, on a run page, the run's
// stream: without sharing, the fourth tab waits for a connection that never frees. Here each stream is one
// connection however many tabs follow it: the live feed once, each run once. A tab that joins a run's stream late
// is sent what the stream has carried so far, then what comes next.
//
// Messages from a tab: {type: "hello", tab}, {type: "sight", hidden}, {type: "follow", id, path, authorization},
// {type: "stop", id}, {type: "closing"}. To a tab: {type: "event", id, data, eventId}, {type: "state", id, state},
// {type: "failed", id, status, body}.
//
// A tab out of sight (it says so on every change of document.visibilityState) is sent nothing of a run's stream: the
// worker notes where the tab stopped in the events it keeps anyway (for tabs that join late) and sends it the rest
// when the tab is looked at again, so fifty background tabs on one run do not wake fifty renderers for every chunk.
// The live feed, which keeps no events, is sent as it comes.
//
// A tab holds a Web Lock named after it for as long as it lives, and says its name in its hello; the worker asks
// for the same lock, which it is granted only once the tab is gone (closed, crashed, discarded), and then stops the
// tab's streams. No timer is involved, so a background tab whose timers the browser slows to one a minute, or a
// frozen tab, keeps its streams. A tab that closes normally says so at once ("closing").

const RETRY_MS = 1000;
const streams = new Map(); // key (path and authorization) -> stream
const ports = new Map(); // port -> {follows: Map(id -> stream), hidden, kept: Map(id -> Kept)}

// What a tab out of sight was not sent of one run's stream: its events from `from` on (the stream keeps them), the
// events without an id among them (`extra`: [index, message]), and the last state the stream told (`last`).
class Kept {
  constructor(stream, from) {
    this.stream = stream;
    this.from = from;
    this.extra = [];
    this.last = null;
  }

  note(message) {
    if (message.type !== "event") this.last = message;
    else if (message.eventId === null) this.extra.push([this.stream.events.length, message]);
  }

  sendTo(port, id) {
    const { events } = this.stream;
    let extra = 0;
    for (let index = this.from; index <= events.length; index++) {
      while (extra < this.extra.length && this.extra[extra][0] === index) send(port, this.extra[extra++][1]);
      if (index < events.length) send(port, { type: "event", id, data: events[index][0], eventId: events[index][1] });
    }
    if (this.last) send(port, this.last);
  }
}

function key(path, authorization) {
  return `${authorization || ""} ${path}`;
}

function send(port, message) {
  try {
    port.postMessage(message);
  } catch {
    // a closed tab's port
  }
}

class SharedStream {
  constructor(path, authorization) {
    this.path = path;
    this.authorization = authorization;
    this.key = key(path, authorization);
    this.followers = new Map(); // port -> subscription id
    this.events = []; // [data, eventId] of a stream with ids (a run's), replayed to a late tab
    this.state = "connecting";
    this.lastId = null;
    this.controller = new AbortController();
    this.run();
  }

  add(port, id) {
    this.followers.set(port, id);
    const entry = ports.get(port);
    if (entry?.hidden && this.events.length) entry.kept.set(id, new Kept(this, 0));
    else for (const [data, eventId] of this.events) send(port, { type: "event", id, data, eventId });
    this.sendTo(port, { type: "state", id, state: this.state });
  }

  // A run's stream (its events have ids) is kept for a tab out of sight (Kept), from its first event on.
  sendTo(port, message) {
    const entry = ports.get(port);
    let kept = entry?.kept.get(message.id);
    if (!kept && entry?.hidden && message.type === "event" && message.eventId !== null) {
      kept = new Kept(this, this.events.length - 1); // this event is the last the stream keeps
      entry.kept.set(message.id, kept);
      return;
    }
    if (kept) kept.note(message);
    else send(port, message);
  }

  remove(port) {
    this.followers.delete(port);
    if (this.followers.size === 0) {
      this.controller.abort();
      if (streams.get(this.key) === this) streams.delete(this.key);
    }
  }

  broadcast(message) {
    for (const [port, id] of this.followers) this.sendTo(port, { ...message, id });
  }

  setState(state) {
    this.state = state;
    this.broadcast({ type: "state", state });
  }

  end(message) {
    if (streams.get(this.key) === this) streams.delete(this.key); // a tab that follows it later starts afresh
    this.broadcast(message);
    this.followers.clear();
  }

  async run() {
    const signal = this.controller.signal;
    while (!signal.aborted) {
      try {
        const headers = { Accept: "text/event-stream" };
        if (this.authorization) headers.Authorization = this.authorization;
        if (this.lastId !== null) headers["Last-Event-ID"] = this.lastId;
        const response = await fetch(this.path, { headers, signal });
        if (!response.ok && response.status >= 400 && response.status < 500) {
          const body = await response.json().catch(() => ({}));
          this.end({ type: "failed", status: response.status, body });
          return;
        }
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        this.setState("live");
        if (await this.read(response)) {
          this.state = "done";
          this.end({ type: "state", state: "done" });
          return;
        }
      } catch {
        if (signal.aborted) return;
      }
      this.setState("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  // Reads the response's events until [DONE] (true) or the connection's end (false).
  async read(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let eventId = null;
        let data = null;
        for (const line of block.split("\n")) {
          if (line.startsWith("id: ")) eventId = line.slice(4);
          else if (line.startsWith("data: ")) data = line.slice(6);
        }
        if (data === null) continue;
        if (data === "[DONE]") return true;
        if (eventId !== null) {
          this.lastId = eventId;
          this.events.push([data, eventId]);
        }
        this.broadcast({ type: "event", data, eventId });
      }
    }
  }
}

function stop(port, id) {
  const follows = ports.get(port)?.follows;
  const stream = follows?.get(id);
  if (!stream) return;
  follows.delete(id);
  ports.get(port).kept.delete(id);
  stream.remove(port);
}

function forget(port) {
  const entry = ports.get(port);
  if (!entry) return;
  for (const id of [...entry.follows.keys()]) stop(port, id);
  ports.delete(port);
}

onconnect = (event) => {
  const port = event.ports[0];
  ports.set(port, { follows: new Map(), hidden: false, kept: new Map() });
  port.onmessage = ({ data: message }) => {
    const entry = ports.get(port);
    if (!entry) return;
    if (message.type === "hello") {
      navigator.locks?.request(message.tab, () => forget(port)); // granted once the tab is gone
    } else if (message.type === "sight") {
      entry.hidden = Boolean(message.hidden);
      if (!entry.hidden) {
        const kept = entry.kept;
        entry.kept = new Map();
        for (const [id, held] of kept) held.sendTo(port, id);
      }
    } else if (message.type === "follow") {
      const wanted = key(message.path, message.authorization);
      let stream = streams.get(wanted);
      if (!stream) {
        stream = new SharedStream(message.path, message.authorization);
        streams.set(wanted, stream);
      }
      entry.follows.set(message.id, stream);
      stream.add(port, message.id);
    } else if (message.type === "stop") {
      stop(port, message.id);
    } else if (message.type === "closing") {
      forget(port);
    }
  };
  port.start();
};
