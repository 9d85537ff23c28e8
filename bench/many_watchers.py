"""Many SSE streams on one API server over many live runs: how late does each chunk reach each client after its
commit, next to one stream per run measured in the same invocation, and what does an idle stream cost the server?

    python bench/many_watchers.py [--streams 1000] [--runs 100] [--deltas 100] [--delta-ms 20] [--out-of-step]
                                  [--stages] [--store sqlite|postgresql|postgresql://...] [--db-file PATH]

Three processes besides the embedded dev server (and PostgreSQL with ``--store postgresql``):

- this one: the API server (``ApiServer`` on 127.0.0.1, the App's client) and the orchestration;
- a worker (``--role worker``): the agent's model is scripted to wait for a gate file, then stream ``--deltas``
  words ``--delta-ms`` apart. Its store's ``record`` (every chunk write goes through it) is wrapped to note, right
  after the commit returned, the wall-clock time of each offset it wrote: the commit time of every chunk;
- the clients (``--role clients``): non-blocking sockets the event loop watches (``GET /api/runs/:id/stream``,
  HTTP/1.1 chunked framing and SSE parsed by hand, cheaper than an HTTP library so the clients are not what is
  measured), noting two wall-clock times for each event: when its bytes reached the client's socket (the kernel's
  receive stamp, ``SO_TIMESTAMPNS``) and when the clients' process read them.

Two phases, each on ``--runs`` new runs held at the gate until every stream has its first event:

1. single: one stream per run;
2. many: ``--streams`` streams spread evenly over the runs. Before the gate opens the server's RSS is read with
   every stream open and idle; the difference from before the streams connected, divided by the streams, is the
   memory per idle stream. The API server's CPU time is read across the streaming.

Each phase also reports its length (gate to the last ``[DONE]``), the CPU of the API server, the worker and the
clients' process while it streamed (``/proc``), to tell a saturated machine from a slow fan-out, and the API server's
garbage collections meanwhile (a full one stops its event loop, and every stream with it).

Lag = arrival at the client's socket − commit for each stream and each chunk committed after the gate opened (the
``start`` chunk and the step's first chunks, committed while the streams connected, are left out). Every stream must
end with ``[DONE]`` after the run's ``finish`` chunk and hold each of the run's journal offsets once, in order, with
the same bytes as every other stream of the run. Streams that are not whole are counted by how they ended: ``cut``
(cut off as a slow client, with the cut-off event: the clients' process could not keep up), ``refused`` (not a 200:
the route asks Temporal about the run first), ``lost`` (a chunk missing, repeated or out of place, or other bytes than
the run's other streams: never expected). The lag until the clients' process read each event is shown beside it
(``read``): the clients share the machine's two cores with the server and the worker, which a thousand people watching
from their own machines do not. ``--stages`` also prints where the lag accrues in the API server (``Stages``). The
last line is quotable::

    many_watchers: store=sqlite streams=1000 runs=100 lag p50=..ms p95=..ms max=..ms single p50=..ms p95=..ms
        max=..ms ratio(p95)=..x read p95=..ms single-read p95=..ms read-ratio(p95)=..x idle-stream=..KB api-cpu=..%
        lost=0 cut=0 refused=0
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import os
import random
import resource
import socket
import struct
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from bench._common import (
    add_dev_server_arguments,
    add_store_argument,
    bench_parser,
    bench_store,
    busy_warning,
    describe_store,
    out,
    process_cpu_seconds,
    quantile,
    run_as_module,
    start_server,
    store_kind,
)
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.cli._collector import freeze_startup_objects
from tempo_agents.models.model import ModelRequest
from tempo_agents.server.serving import ApiServer
from tempo_agents.store import JournalEntry, Store
from tempo_agents.streams.run_tail import RunTail

AGENT_ID = "watched"
GATE_POLL_SECONDS = 0.01
CONNECT_TIMEOUT = 600.0


# The worker: a model held at a gate, and a store that notes when each offset was committed ------------------------


def watched_agent(gate_dir: Path, deltas: int, delta_ms: float, *, out_of_step: bool = False) -> Agent:
    """Waits until the file named by the prompt exists in ``gate_dir``, then streams ``deltas`` words (with
    ``out_of_step``, after a pause of its own, up to ``delta_ms``, so the runs' words do not fall at the same
    instants)."""
    text = " ".join(f"w{n}" for n in range(deltas))
    gates: dict[str, asyncio.Task[None]] = {}  # one poller per gate, however many runs wait at it

    async def opened(gate: Path) -> None:
        while not gate.exists():
            await asyncio.sleep(GATE_POLL_SECONDS)

    async def respond(request: ModelRequest) -> ScriptedResponse:
        name = request.messages[-1].text
        if name not in gates:
            gates[name] = asyncio.get_running_loop().create_task(opened(gate_dir / name))
        await asyncio.shield(gates[name])
        if out_of_step:
            await asyncio.sleep(random.uniform(0, delta_ms / 1000))
        return ScriptedResponse(text=text)

    return Agent(id=AGENT_ID, model=ScriptedModel(respond, delta_delay=delta_ms / 1000))


def note_commits(store: Store, into: list[tuple[str, list[int], float]]) -> None:
    """Wrap ``store.record``: each write's run, offsets and the wall-clock time its commit returned."""
    record = store.record

    async def noted(run_id: str, *args: Any, **kwargs: Any) -> list[int]:
        offsets = await record(run_id, *args, **kwargs)
        into.append((run_id, offsets, time.time()))
        return offsets

    store.record = noted  # type: ignore[method-assign]


async def worker_role(args: argparse.Namespace) -> int:
    client = await Client.connect(args.address, data_converter=pydantic_data_converter)
    agent = watched_agent(args.gate_dir, args.deltas, args.delta_ms, out_of_step=args.out_of_step)
    app = App(agents=[agent], client=client, store=args.store_url, task_queue=args.task_queue)
    commits: list[tuple[str, list[int], float]] = []
    note_commits(app.store, commits)
    loop = asyncio.get_running_loop()
    async with app.worker():
        freeze_startup_objects()  # as `tempo-agents worker` does once it polls
        print("READY", flush=True)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            if line.startswith("commits "):  # a file, not the pipe: a line this long must not be cut by other output
                Path(line.split(" ", 1)[1].strip()).write_text(json.dumps(commits))
                print("COMMITS", flush=True)
                commits.clear()
    await app.store.close()
    return 0


# The clients: raw HTTP/1.1 connections, SSE parsed by hand ---------------------------------------------------------


@dataclass
class Seen:
    """One stream as its client saw it."""

    run_id: str
    offsets: list[int]
    arrivals: list[float]
    """When each event's bytes reached the client's socket (the kernel's stamp)."""
    reads: list[float]
    """When the clients' process read them."""
    digests: list[int]
    done: bool = False
    error: str | None = None


class ChunkedSse:
    """Parses an HTTP/1.1 chunked body of SSE events as bytes arrive."""

    def __init__(self, seen: Seen) -> None:
        self.seen = seen
        self._raw = b""
        self._events = b""

    def feed(self, data: bytes, arrived: float, read: float) -> None:
        self._raw += data
        while True:
            head, sep, rest = self._raw.partition(b"\r\n")
            if not sep:
                return
            size = int(head, 16)
            if size == 0:
                self._raw = b""
                return
            if len(rest) < size + 2:
                return
            self._events += rest[:size]
            self._raw = rest[size + 2 :]
            self._parse_events(arrived, read)

    def _parse_events(self, arrived: float, read: float) -> None:
        *blocks, self._events = self._events.split(b"\n\n")
        for block in blocks:
            if block.startswith(b":"):
                continue
            if block == b"data: [DONE]":
                self.seen.done = True
                continue
            event_id, _, data = block.partition(b"\n")
            if not event_id.startswith(b"id: "):
                self.seen.error = block.decode()[:200]
                continue
            self.seen.offsets.append(int(event_id[4:]))
            self.seen.arrivals.append(arrived)
            self.seen.reads.append(read)
            self.seen.digests.append(zlib.crc32(data))


_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
"""Linux's option (and control message) that stamps each read with the time its bytes reached the socket."""
_STAMP_SPACE = socket.CMSG_SPACE(16)


def _stamped(ancillary: list[tuple[int, int, bytes]]) -> float | None:
    """The kernel's receive time in a read's control messages (``SO_TIMESTAMPNS``), if it is there."""
    for level, kind, stamp in ancillary:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS:
            seconds, nanoseconds = struct.unpack("qq", stamp[:16])
            return float(seconds + nanoseconds / 1e9)
    return None


class SseConnection:
    """One stream's connection, a non-blocking socket the event loop watches: each read is handed over as it
    arrives, with no task woken (the cheapest a client in Python gets, so the clients' process takes as little of the
    machine's CPU from the server as it can), and comes with two times: when its bytes reached the socket (the
    kernel's stamp, ``SO_TIMESTAMPNS``: the last of the bytes a read takes, so never early) and when this process
    read them (after waiting for a CPU beside the server and the worker)."""

    def __init__(self, run_id: str, first: asyncio.Event, seen: Seen) -> None:
        self._request = f"GET /api/runs/{run_id}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        self._first = first
        self._seen = seen
        self._head: bytes | None = b""
        self._parser = ChunkedSse(seen)
        self._loop = asyncio.get_running_loop()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setblocking(False)
        self._socket.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        self.closed: asyncio.Future[None] = self._loop.create_future()

    async def open(self, port: int) -> None:
        await self._loop.sock_connect(self._socket, ("127.0.0.1", port))
        await self._loop.sock_sendall(self._socket, self._request.encode())
        self._loop.add_reader(self._socket.fileno(), self._readable)

    def _readable(self) -> None:
        try:
            data, ancillary, _, _ = self._socket.recvmsg(1 << 16, _STAMP_SPACE)
        except BlockingIOError:
            return
        except OSError as error:
            self._seen.error = self._seen.error or f"read failed: {error}"
            data, ancillary = b"", []
        read = time.time()
        if not data:
            self._close()
            return
        arrived = _stamped(ancillary) or read
        if self._head is not None:  # the response's head, then its body
            head, sep, data = (self._head + data).partition(b"\r\n\r\n")
            if not sep:
                self._head = head
                return
            self._head = None
            if not head.startswith(b"HTTP/1.1 200"):
                self._seen.error = head.decode()[:200]
                self._close()
                return
        self._parser.feed(data, arrived, read)
        if self._seen.offsets:
            self._first.set()

    def _close(self) -> None:
        self._loop.remove_reader(self._socket.fileno())
        self._socket.close()
        self._first.set()
        if not self.closed.done():
            self.closed.set_result(None)


async def follow(port: int, run_id: str, first: asyncio.Event, seen: Seen) -> None:
    connection = SseConnection(run_id, first, seen)
    await connection.open(port)
    await connection.closed


async def clients_role(args: argparse.Namespace) -> int:
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        run_ids: list[str] = json.loads(line)
        seen = [Seen(run_id, [], [], [], []) for run_id in run_ids]
        firsts = [asyncio.Event() for _ in run_ids]
        tasks = [
            asyncio.create_task(follow(args.port, s.run_id, first, s)) for s, first in zip(seen, firsts, strict=True)
        ]
        await asyncio.wait_for(asyncio.gather(*(first.wait() for first in firsts)), CONNECT_TIMEOUT)
        print("CONNECTED", flush=True)
        await asyncio.gather(*tasks, return_exceptions=True)
        Path(args.gate_dir / "seen.json").write_text(json.dumps([s.__dict__ for s in seen]))
        print("SEEN", flush=True)
    return 0


# The orchestration --------------------------------------------------------------------------------------------------


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def others_cpu(processes: Sequence[asyncio.subprocess.Process]) -> list[float]:
    return [process_cpu_seconds(process.pid) for process in processes]


@dataclass
class PhaseResult:
    lags_ms: list[float]
    """Commit to the client's socket, each chunk of each stream."""
    read_lags_ms: list[float]
    """Commit to the clients' process reading it."""
    ends: dict[str, int]
    """How many streams were not whole, by how they ended (``end_of``), and ``broken`` (other bytes than the
    run's other streams)."""
    idle_stream_kb: float
    cpu_percent: float
    chunks: int
    seconds: float = 0.0
    """From opening the gate to the last stream's end."""
    worker_cpu_percent: float = 0.0
    clients_cpu_percent: float = 0.0
    collections: Collections | None = None
    """The API process's garbage collections while it streamed."""


class Collections:
    """The garbage collections of this process (the API server's) between :meth:`start` and :meth:`stop`, timed
    with ``gc.callbacks``: a full collection stops the event loop, every stream's chunks waiting meanwhile."""

    def __init__(self) -> None:
        self.full_ms: list[float] = []
        self.young = 0
        self._began = 0.0

    def start(self) -> None:
        gc.callbacks.append(self._timed)

    def stop(self) -> None:
        gc.callbacks.remove(self._timed)

    def _timed(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        elif info["generation"] == 2:
            self.full_ms.append(1000 * (time.perf_counter() - self._began))
        else:
            self.young += 1

    def describe(self) -> str:
        longest = max(self.full_ms, default=0.0)
        return (
            f"collections while streaming: {len(self.full_ms)} full ({sum(self.full_ms):.0f} ms, longest "
            f"{longest:.0f} ms), {self.young} young"
        )


class Stages:
    """``--stages``: where a chunk's lag accrues in this process, the API server, stamped by wrapping (nothing of
    tempo-agents is changed): the SQLite watcher's wake-up of the run's tail (``Watcher._wake_up_to``), the tail's
    task resuming from its wait (``Store.wait_for_chunks`` returning), the hand-out to the streams beginning
    (``RunTail._hand_out``), then the bytes at the client's socket. PostgreSQL's listener has no watcher stage."""

    def __init__(self, store: Store) -> None:
        self.woken: dict[str, list[tuple[int, float]]] = {}
        self.resumed: dict[tuple[str, int], float] = {}
        self.handed: dict[tuple[str, int], float] = {}
        waiting = store.wait_for_chunks

        async def wait_for_chunks(run_id: str, offset: int, timeout: float) -> None:
            await waiting(run_id, offset, timeout)
            self.resumed.setdefault((run_id, offset), time.time())

        store.wait_for_chunks = wait_for_chunks  # type: ignore[method-assign]
        watcher = getattr(store, "_watcher", None)
        if watcher is not None:
            waking = watcher._wake_up_to

            def wake_up_to(latest: dict[str, int]) -> None:
                now = time.time()
                for run_id, last in latest.items():
                    self.woken.setdefault(run_id, []).append((last, now))
                waking(latest)

            watcher._wake_up_to = wake_up_to
        handing_out = RunTail._hand_out

        def hand_out(tail: RunTail, entries: Sequence[JournalEntry]) -> None:
            now = time.time()
            for entry in entries:
                self.handed[(tail.run_id, entry.offset)] = now
            handing_out(tail, entries)

        RunTail._hand_out = hand_out  # type: ignore[method-assign,assignment]

    def report(self, name: str, seen: Sequence[Seen], commits: dict[tuple[str, int], float]) -> None:
        """One line a phase: each stage's p50 / p95 over the chunks it stamped (a chunk read in the same batch as the
        one its tail waited for has no resume of its own)."""
        stages: dict[str, list[float]] = {"commit->woken": [], "woken->resumed": [], "resumed->handed": []}
        for (run_id, offset), committed in commits.items():
            woken = next((t for last, t in self.woken.get(run_id, []) if last >= offset and t >= committed), None)
            resumed = self.resumed.get((run_id, offset))
            handed = self.handed.get((run_id, offset))
            if woken is not None:
                stages["commit->woken"].append(1000 * (woken - committed))
            if woken is not None and resumed is not None and resumed >= woken:
                stages["woken->resumed"].append(1000 * (resumed - woken))
            if resumed is not None and handed is not None and resumed >= committed:
                stages["resumed->handed"].append(1000 * (handed - resumed))
        stages["handed->socket"] = [
            1000 * (arrived - self.handed[(stream.run_id, offset)])
            for stream in seen
            for offset, arrived in zip(stream.offsets, stream.arrivals, strict=True)
            if (stream.run_id, offset) in commits and (stream.run_id, offset) in self.handed
        ]
        out(f"{name} stages: " + ", ".join(f"{stage} {brief(sorted(lags))}" for stage, lags in stages.items() if lags))
        self.woken.clear()
        self.resumed.clear()
        self.handed.clear()


def brief(lags: list[float]) -> str:
    return f"p50={quantile(lags, 0.5):.1f}ms p95={quantile(lags, 0.95):.1f}ms (n={len(lags)})"


class Bench:
    def __init__(self, args: argparse.Namespace, app: App, port: int, gate_dir: Path) -> None:
        self.args = args
        self.app = app
        self.port = port
        self.gate_dir = gate_dir
        self.worker: asyncio.subprocess.Process | None = None
        self.clients: asyncio.subprocess.Process | None = None
        self.stages = Stages(app.store) if args.stages else None

    async def spawn(self, role: str, *extra: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.many_watchers", "--role", role, *extra,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 30,
            cwd=Path(__file__).resolve().parent.parent,
        )  # fmt: skip

    async def ask(self, process: asyncio.subprocess.Process, line: str) -> None:
        assert process.stdin is not None
        process.stdin.write(line.encode() + b"\n")
        await process.stdin.drain()

    async def answer(self, process: asyncio.subprocess.Process, tag: str) -> str:
        """The rest of the process's next line that starts with ``tag`` (other lines are its libraries' output)."""
        assert process.stdout is not None
        while line := await process.stdout.readline():
            head, _, rest = line.decode().rstrip("\n").partition(" ")
            if head == tag:
                return rest
            out(line.decode().rstrip("\n"))
        raise RuntimeError("a bench process ended early")

    async def phase(self, name: str, streams: int) -> PhaseResult:
        assert self.worker is not None and self.clients is not None
        gate = f"{name}-{uuid.uuid4().hex[:8]}"  # the prompt: the file the runs' model waits for
        run_ids = []
        for _ in range(self.args.runs):
            started = await self.app.stream(AGENT_ID, gate)
            run_ids.append(started.run_id)
            await started.aclose()
        followed = [run_ids[n % len(run_ids)] for n in range(streams)]
        gc.collect()
        before_kb = rss_kb()
        await self.ask(self.clients, json.dumps(followed))
        await self.answer(self.clients, "CONNECTED")
        await asyncio.sleep(1.0)
        gc.collect()
        idle_kb = (rss_kb() - before_kb) / streams
        cpu_before, wall_before = cpu_seconds(), time.monotonic()
        others_before = others_cpu((self.worker, self.clients))
        collections = Collections()
        collections.start()
        opened = time.time()
        (self.gate_dir / gate).touch()
        await self.answer(self.clients, "SEEN")
        seconds = time.monotonic() - wall_before
        collections.stop()
        cpu_percent = 100 * (cpu_seconds() - cpu_before) / seconds
        worker_percent, clients_percent = (
            100 * (now - then) / seconds
            for now, then in zip(others_cpu((self.worker, self.clients)), others_before, strict=True)
        )
        seen = [Seen(**s) for s in json.loads((self.gate_dir / "seen.json").read_text())]
        commits_file = self.gate_dir / "commits.json"
        await self.ask(self.worker, f"commits {commits_file}")
        await self.answer(self.worker, "COMMITS")
        commits: dict[tuple[str, int], float] = {}
        for run_id, offsets, at in json.loads(commits_file.read_text()):
            for offset in offsets:
                commits[(run_id, offset)] = at
        since_gate = {at: t for at, t in commits.items() if t >= opened}
        if self.stages is not None:
            self.stages.report(name, seen, since_gate)
        result = await self.judge(seen, since_gate, idle_kb, cpu_percent)
        result.seconds, result.worker_cpu_percent, result.clients_cpu_percent = seconds, worker_percent, clients_percent
        result.collections = collections
        return result

    async def judge(
        self, seen: Sequence[Seen], commits: dict[tuple[str, int], float], idle_kb: float, cpu_percent: float
    ) -> PhaseResult:
        lags: list[float] = []
        read_lags: list[float] = []
        ends = {"lost": 0, "broken": 0, "cut": 0, "refused": 0}
        reference: dict[str, list[int]] = {}
        journals: dict[str, int] = {}
        for stream in seen:
            if stream.run_id not in journals:
                journals[stream.run_id] = len(await self.app.store.read_chunks(stream.run_id, 0, 100_000))
            ending = end_of(stream, journals[stream.run_id])
            if ending == "whole" and reference.setdefault(stream.run_id, stream.digests) != stream.digests:
                ending = "broken"
            if ending != "whole":
                if not ends[ending]:  # the first of each kind, to see what happened
                    shown = stream.offsets[:5], stream.offsets[-5:], len(stream.offsets), journals[stream.run_id]
                    out(f"  a {ending} stream of {stream.run_id}: offsets {shown}, done={stream.done}, {stream.error}")
                ends[ending] += 1
            for offset, arrived, read in zip(stream.offsets, stream.arrivals, stream.reads, strict=True):
                committed = commits.get((stream.run_id, offset))
                if committed is not None:
                    lags.append(1000 * (arrived - committed))
                    read_lags.append(1000 * (read - committed))
        chunks = sum(journals.values())
        return PhaseResult(lags, read_lags, ends, idle_kb, cpu_percent, chunks)


def end_of(stream: Seen, journal_length: int) -> str:
    """``whole`` (every offset once, in order, then ``[DONE]``), ``refused`` (not a 200), ``cut`` (cut off as a
    slow client, with the cut-off event), or ``lost`` (anything else: a missing, repeated or misplaced chunk)."""
    if stream.error is not None and stream.error.startswith("HTTP/"):
        return "refused"
    if stream.error is not None and "stream cut off" in stream.error:
        return "cut" if stream.offsets == list(range(len(stream.offsets))) else "lost"
    whole = stream.done and stream.error is None and stream.offsets == list(range(journal_length))
    return "whole" if whole else "lost"


def ends(result: PhaseResult) -> str:
    return " ".join(f"{name}={count}" for name, count in result.ends.items())


def cpu(result: PhaseResult) -> str:
    return (
        f"{result.seconds:.1f} s from the gate to the last [DONE], CPU while streaming (% of a core): "
        f"API server {result.cpu_percent:.0f}, worker {result.worker_cpu_percent:.0f}, "
        f"clients {result.clients_cpu_percent:.0f}"
        + ("" if result.collections is None else f"; API server's {result.collections.describe()}")
    )


def summary(lags_ms: list[float]) -> str:
    lags = sorted(lags_ms)
    return (
        f"p50={quantile(lags, 0.5):.1f}ms p95={quantile(lags, 0.95):.1f}ms max={max(lags, default=float('nan')):.1f}ms"
    )


async def orchestrate(args: argparse.Namespace) -> int:
    load = os.getloadavg()
    step = "out of step" if args.out_of_step else "in step"
    out(
        f"many_watchers: {args.streams} streams over {args.runs} runs, {args.deltas} deltas {args.delta_ms:g} ms "
        f"apart, the runs {step}"
    )
    out(f"store: {describe_store(args.store)}; load average at start {load[0]:.2f}")
    if load[0] > 1.0:
        out(busy_warning())
    with tempfile.TemporaryDirectory() as directory, bench_store(args.store, Path(directory)) as store:
        env = await start_server(args.db_file, stock=args.stock_server)
        try:
            return await measure(args, env.client, store.url, Path(directory))
        finally:
            await env.shutdown()


async def measure(args: argparse.Namespace, client: Client, store_url: str, directory: Path) -> int:
    gate_dir = directory / "gates"
    gate_dir.mkdir()
    task_queue = f"watchers-{uuid.uuid4().hex[:8]}"
    app = App(agents=[watched_agent(gate_dir, args.deltas, args.delta_ms)], client=client, store=store_url,
              task_queue=task_queue)  # fmt: skip
    server = ApiServer(app, port=0)
    await server.start()
    freeze_startup_objects()  # as `tempo-agents serve` does once it serves
    bench = Bench(args, app, server.port, gate_dir)
    address = client.service_client.config.target_host
    bench.worker = await bench.spawn(
        "worker", "--address", address, "--store-url", store_url, "--task-queue", task_queue,
        "--gate-dir", str(gate_dir), "--deltas", str(args.deltas), "--delta-ms", str(args.delta_ms),
        *(["--out-of-step"] if args.out_of_step else []),
    )  # fmt: skip
    bench.clients = await bench.spawn("clients", "--port", str(server.port), "--gate-dir", str(gate_dir))
    try:
        await bench.answer(bench.worker, "READY")
        single = await bench.phase("single", args.runs)
        many = await bench.phase("many", args.streams)
    finally:
        for process in (bench.worker, bench.clients):
            if process.stdin is not None:
                process.stdin.close()
            await process.wait()
        await server.stop()
        await app.store.close()
    report(args, single, many)
    return 0


def report(args: argparse.Namespace, single: PhaseResult, many: PhaseResult) -> None:
    def both(result: PhaseResult) -> str:
        return f"lag {summary(result.lags_ms)} (read by the client: {summary(result.read_lags_ms)})"

    out(f"single: {args.runs} streams, {single.chunks} chunks, {both(single)}, {ends(single)}, {cpu(single)}")
    out(
        f"many: {args.streams} streams, {many.chunks} chunks, {len(many.lags_ms)} deliveries, {both(many)}, "
        f"{ends(many)}, idle stream {many.idle_stream_kb:.1f} KB, {cpu(many)}"
    )
    ratio = quantile(sorted(many.lags_ms), 0.95) / quantile(sorted(single.lags_ms), 0.95)
    read_ratio = quantile(sorted(many.read_lags_ms), 0.95) / quantile(sorted(single.read_lags_ms), 0.95)
    lost = sum(single.ends[e] + many.ends[e] for e in ("lost", "broken"))
    out(
        f"many_watchers: store={store_kind(args.store)} streams={args.streams} runs={args.runs}"
        f"{' out-of-step' if args.out_of_step else ''} lag {summary(many.lags_ms)} "
        f"single {summary(single.lags_ms)} ratio(p95)={ratio:.2f}x "
        f"read p95={quantile(sorted(many.read_lags_ms), 0.95):.1f}ms "
        f"single-read p95={quantile(sorted(single.read_lags_ms), 0.95):.1f}ms read-ratio(p95)={read_ratio:.2f}x "
        f"idle-stream={many.idle_stream_kb:.1f}KB "
        f"api-cpu={many.cpu_percent:.0f}% lost={lost} cut={many.ends['cut']} refused={many.ends['refused']}"
    )


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--deltas", type=int, default=100, help="words each run's model streams")
    parser.add_argument("--delta-ms", type=float, default=20.0, help="milliseconds between the words")
    parser.add_argument(
        "--out-of-step",
        action="store_true",
        help="each run starts its words after a random pause of up to --delta-ms, as independent runs do (by default "
        "every run's words fall at the same instants: the worst case for the fan-out)",
    )
    parser.add_argument(
        "--stages", action="store_true", help="also print where the lag accrues in the API server (class Stages)"
    )
    add_store_argument(parser)
    add_dev_server_arguments(parser)
    parser.add_argument("--role", choices=("bench", "worker", "clients"), default="bench", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--store-url", help=argparse.SUPPRESS)
    parser.add_argument("--task-queue", help=argparse.SUPPRESS)
    parser.add_argument("--gate-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--loop", choices=("asyncio", "uvloop"), default="asyncio", help="the API server's event loop (this process's)"
    )
    args = parser.parse_args()
    role = {"bench": orchestrate, "worker": worker_role, "clients": clients_role}[args.role]
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    if args.loop == "uvloop" and args.role == "bench":  # the bench extra installs it; the tests' install does not
        loop_factory = importlib.import_module("uvloop").new_event_loop
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(role(args))


if __name__ == "__main__":
    run_as_module("many_watchers")
