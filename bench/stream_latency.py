"""Token streaming through a run's journal against the same stream read directly, from one local provider server.

    python bench/stream_latency.py [--tokens 2000] [--delay-ms 10] [--pause-every 0] [--pause-ms 500]
                                   [--repeats 1] [--no-subprocess] [--db-file PATH] [--stock-server]
                                   [--journal-chunks 500] [--idle-runs 100] [--idle-seconds 10]
                                   [--store sqlite|postgresql|postgresql://...]

The provider is ``tests.support.provider_servers.openai_server.OpenAIServer`` in this process (on its own event loop
in a thread, so the worker's loop does not hold up its cadence), streaming ``--tokens``
tokens ``--delay-ms`` apart (optionally pausing ``--pause-ms`` after every ``--pause-every`` tokens); a thin
subclass records when the server writes each token (the provider's emit time) and when each request arrived.

- tempo-agents: an agent on ``openai_compatible(..., base_url=server.base_url, api_key_env=None)``, one step, no
  tools, run by an App whose worker runs in this process; a client tails the run in this process
  (``stream.full_stream``) and, unless ``--no-subprocess``, a second client tails the same run from another
  process (``App(store=...).attach(run_id)``).
- baseline: the same scripted stream read with ``httpx`` (``client.stream("POST", ...)``, SSE parsed by line).
- journal (``--journal-chunks``): this process appends chunks straight to the store ~10 ms apart while another
  process tails them (``attach``): the lag the store adds across processes, without the model step's batching.
- idle tail (``--idle-runs``): another process tails that many runs that receive no chunks for
  ``--idle-seconds`` and reports the CPU time it used.

``--store``: the store of all three (the App, the other-process tails, the journal's appends): SQLite in a
temporary file (default), PostgreSQL on a throwaway server this script starts (``postgresql``, as
bench/store.py does) or at a URL.

Every arrival is matched to its token's emit time (one ``text-delta`` chunk per provider token). See
bench/README.md for every figure. The last line is quotable::

    stream_latency: store=sqlite tokens=2000 first-token tempo=XX.Xms baseline=YY.Yms (+ZZ.Zms) rate tempo=..tok/s
    baseline=..tok/s (..x) lag p50 tempo=..ms baseline=..ms p95 tempo=..ms baseline=..ms [other process ...]

(on one line), after two more quotable lines::

    stream_latency journal: store=sqlite chunks=500 other-process lag p50=..ms p95=..ms max=..ms
    stream_latency idle tail: store=sqlite runs=100 seconds=10.0 cpu=..% of one core (..ms CPU)
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support.provider_servers, from any directory

from bench._common import (
    add_dev_server_arguments,
    add_store_argument,
    bench_parser,
    bench_store,
    busy_warning,
    describe_store,
    median,
    out,
    quantile,
    run_as_module,
    start_server,
    store_kind,
)
from tempo_agents import Agent, App
from tempo_agents.journal.chunks import TextDeltaChunk
from tempo_agents.journal.writer import TEXT_FLUSH_SECONDS
from tempo_agents.models.openai_compatible import openai_compatible
from tempo_agents.store import ChunkWrite, open_store
from tempo_agents.store.sqlite import SQLiteStore
from tests.support.provider_servers.openai_server import (
    DONE,
    OpenAIServer,
    RecordedRequest,
    Reply,
    Sleep,
    StreamItem,
    chunk,
)

AGENT_ID = "bench-stream"
MODEL = "gpt-bench"
TEMPO = "tempo-agents"
SUBPROCESS = "tempo-agents, other process"
BASELINE = "httpx direct"
POLL_INTERVAL: float = inspect.signature(SQLiteStore).parameters["poll_interval"].default
JOURNAL_GAP_MS = (5.0, 15.0)
"""The journal phase appends one chunk every 5 to 15 ms (uniform), so appends land at every phase of a poll."""
RUN_TIMEOUT_MARGIN = 120.0
"""Seconds a stream may take beyond its scripted length before the bench gives up."""


def now() -> float:
    """CLOCK_MONOTONIC: one clock for this process and the tailing subprocess."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


# The provider: OpenAIServer, recording when each token is written ---------------------------------


@dataclass
class ServedStream:
    """One streamed reply as the server wrote it."""

    arrived: float
    """When the request had been read (the reply is chosen right after)."""
    head: float | None = None
    """When the status line and headers were written."""
    emits: list[float] = field(default_factory=list)
    """When each content token's event was written (``writer.write``; the bytes leave on the next drain)."""


class _TimedWriter:
    """Stands in for the connection's ``asyncio.StreamWriter`` and notes when each content event is written."""

    def __init__(self, writer: asyncio.StreamWriter, served: ServedStream) -> None:
        self._writer = writer
        self._served = served

    def write(self, data: bytes) -> None:
        stamp = now()
        if self._served.head is None:
            self._served.head = stamp
        elif b'"content":"' in data and b'"content":""' not in data:
            self._served.emits.append(stamp)
        self._writer.write(data)

    async def drain(self) -> None:
        await self._writer.drain()

    @property
    def transport(self) -> asyncio.WriteTransport:
        return self._writer.transport

    def __getattr__(self, name: str) -> Any:
        return getattr(self._writer, name)


class TimedOpenAIServer(OpenAIServer):
    """``OpenAIServer`` noting, per request, when it arrived and when each content token was written."""

    def __init__(self) -> None:
        super().__init__(default_model=MODEL)
        self.served: list[ServedStream] = []

    async def _reply_for(self, request: RecordedRequest) -> Reply:
        self.served.append(ServedStream(arrived=now()))
        return await super()._reply_for(request)

    async def _send(
        self, reply: Reply, request: RecordedRequest, connection: Any, writer: asyncio.StreamWriter
    ) -> bool:
        timed = cast(asyncio.StreamWriter, _TimedWriter(writer, self.served[-1]))
        return await super()._send(reply, request, connection, timed)


class ProviderThread:
    """The provider on its own event loop in a thread: its 10 ms cadence does not wait on the worker's loop.

    (It still shares the interpreter and so the GIL; the figures are relative to its recorded write times.)
    """

    def __init__(self) -> None:
        self.server = TimedOpenAIServer()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="bench-provider", daemon=True)

    def __enter__(self) -> TimedOpenAIServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result(30)
        return self.server

    def __exit__(self, *exc_info: object) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self.server.close(), self._loop).result(30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop.close()


def token_text(index: int) -> str:
    return f"w{index:05d} "


def scripted_stream(tokens: int, delay: float, pause_every: int, pause: float) -> Reply:
    """Like ``text_stream``: a role chunk, then ``tokens`` tokens ``delay`` apart (and pauses), finish, usage."""
    items: list[StreamItem] = [chunk({"role": "assistant", "content": "", "refusal": None})]
    for index in range(tokens):
        wait = delay + (pause if pause_every and index and index % pause_every == 0 else 0.0)
        if wait:
            items.append(Sleep(wait))
        items.append(chunk({"content": token_text(index)}))
    items += [chunk({}, finish_reason="stop"), chunk(usage=(12, tokens)), DONE]
    return Reply(events=items)


# Measurements ------------------------------------------------------------------------------------


@dataclass
class StreamRecord:
    side: str
    started: float
    """When the client asked: ``app.stream(...)`` (tempo-agents) or ``client.stream(...)`` (baseline)."""
    arrivals: list[float]
    texts: list[str]
    served: ServedStream
    cpu_s: float | None = None
    """CPU time of this process (provider thread included) from the start call to the last token; ``None`` for
    the tail in another process."""

    def check(self, tokens: int) -> None:
        expected = [token_text(i) for i in range(tokens)]
        if self.texts != expected:
            first_bad = next((i for i, (a, b) in enumerate(zip(self.texts, expected, strict=False)) if a != b), None)
            raise RuntimeError(
                f"{self.side}: received {len(self.texts)} tokens, expected {tokens} (first difference at {first_bad})"
            )
        if len(self.served.emits) != tokens:
            raise RuntimeError(f"{self.side}: the server recorded {len(self.served.emits)} emits for {tokens} tokens")

    @property
    def first_token_ms(self) -> float:
        """Provider's first token written, to the client holding it."""
        return (self.arrivals[0] - self.served.emits[0]) * 1000

    @property
    def start_to_first_ms(self) -> float:
        return (self.arrivals[0] - self.started) * 1000

    @property
    def start_to_request_ms(self) -> float:
        return (self.served.arrived - self.started) * 1000

    @property
    def rate(self) -> float:
        """Tokens per second between the first and the last arrival."""
        span = self.arrivals[-1] - self.arrivals[0]
        return (len(self.arrivals) - 1) / span if span > 0 else float("inf")

    @property
    def emit_rate(self) -> float:
        span = self.served.emits[-1] - self.served.emits[0]
        return (len(self.served.emits) - 1) / span if span > 0 else float("inf")

    @property
    def cpu_per_token_ms(self) -> float | None:
        return None if self.cpu_s is None else self.cpu_s * 1000 / len(self.arrivals)

    @property
    def lags_ms(self) -> list[float]:
        return [(a - e) * 1000 for a, e in zip(self.arrivals, self.served.emits, strict=True)]

    @property
    def deliveries(self) -> int:
        """Batches: tokens arriving within 1 ms of the one before count as one delivery (a tail reads a batch of
        text deltas at once)."""
        return 1 + sum(1 for a, b in zip(self.arrivals, self.arrivals[1:], strict=False) if b - a > 0.001)

    @property
    def last_token_ms(self) -> float:
        return (self.arrivals[-1] - self.served.emits[-1]) * 1000


async def run_baseline(server: TimedOpenAIServer, http: httpx.AsyncClient) -> StreamRecord:
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Go."}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    arrivals: list[float] = []
    texts: list[str] = []
    cpu = time.process_time()
    started = now()
    async with http.stream("POST", f"{server.base_url}/chat/completions", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            data = line[len("data: ") :]
            if data == DONE:
                break
            event = json.loads(data)
            choices = event.get("choices") or []
            content = choices[0].get("delta", {}).get("content") if choices else None
            if content:
                arrivals.append(now())
                texts.append(content)
    return StreamRecord(BASELINE, started, arrivals, texts, server.served[-1], time.process_time() - cpu)


_TAIL_SCRIPT = """
import asyncio, json, sys, time
from tempo_agents import App

async def main():
    stream = App(store=sys.argv[1]).attach(sys.argv[2])
    print("ready", flush=True)
    arrivals, texts = [], []
    async for chunk in stream.full_stream:
        if chunk.type == "text-delta":
            arrivals.append(time.clock_gettime(time.CLOCK_MONOTONIC))
            texts.append(chunk.payload.text)
    print(json.dumps({"arrivals": arrivals, "texts": texts}), flush=True)

asyncio.run(main())
"""


async def start_tail_process(store_url: str, run_id: str) -> asyncio.subprocess.Process:
    """A client in another process tailing the run (started, and ready, before the run is)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _TAIL_SCRIPT, store_url, run_id, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    ready = await asyncio.wait_for(process.stdout.readline(), 60)
    if ready.strip() != b"ready":
        raise RuntimeError(f"the tailing process did not start: {ready!r}")
    return process


async def finish_tail_process(process: asyncio.subprocess.Process, timeout: float) -> tuple[list[float], list[str]]:
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), timeout)
    finally:
        if process.returncode is None:
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
    parsed: Mapping[str, Any] = json.loads(line)
    return [float(a) for a in parsed["arrivals"]], [str(t) for t in parsed["texts"]]


_JOURNAL_TAIL_SCRIPT = """
import asyncio, json, sys, time
from tempo_agents import App

async def main():
    app = App(store=sys.argv[1])
    stream = app.attach(sys.argv[2])
    count = int(sys.argv[3])
    await app.store.read_chunks(sys.argv[2], 0, 1)  # open the store's connections before the first append
    print("ready", flush=True)
    arrivals = {}
    async for chunk in stream.full_stream:
        arrivals[chunk.offset] = time.clock_gettime(time.CLOCK_MONOTONIC)
        if len(arrivals) == count:
            break
    print(json.dumps([arrivals[i] for i in range(count)]), flush=True)

asyncio.run(main())
"""


async def run_journal(store_url: str, chunks: int) -> list[float]:
    """Append ``chunks`` text deltas straight to the journal (``JOURNAL_GAP_MS`` apart) while another process
    tails them: per chunk, the other process's arrival minus the moment this process called ``append_chunks``."""
    run_id = f"journal-{uuid.uuid4()}"
    store = open_store(store_url)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _JOURNAL_TAIL_SCRIPT, store_url, run_id, str(chunks), stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    try:
        ready = await asyncio.wait_for(process.stdout.readline(), 60)
        if ready.strip() != b"ready":
            raise RuntimeError(f"the journal tail did not start: {ready!r}")
        await asyncio.sleep(0.2)  # the tail is waiting
        gaps = random.Random(0)
        written: list[float] = []
        for index in range(chunks):
            await asyncio.sleep(gaps.uniform(*JOURNAL_GAP_MS) / 1000)
            written.append(now())
            delta = {"type": "text-delta", "runId": run_id, "from": "AGENT", "payload": {"id": "t", "text": f"{index}"}}
            await store.append_chunks(run_id, [ChunkWrite(delta)])
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        arrivals = [float(a) for a in json.loads(line)]
    finally:
        await store.close()
        if process.returncode is None:
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
    return [(a - w) * 1000 for a, w in zip(arrivals, written, strict=True)]


_IDLE_TAIL_SCRIPT = """
import asyncio, json, sys, time
from tempo_agents import App

async def main():
    app = App(store=sys.argv[1])
    runs, seconds = int(sys.argv[2]), float(sys.argv[3])

    streams = [app.attach(f"idle-{i}") for i in range(runs)]

    async def tail(stream):
        async for _ in stream.full_stream:
            raise RuntimeError(f"{stream.run_id} received a chunk")

    tasks = [asyncio.create_task(tail(stream)) for stream in streams]
    await asyncio.sleep(1.0)  # every tail has read once and waits
    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.sleep(seconds)
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    for task in tasks:
        if task.done():
            task.result()
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for stream in streams:
        await stream.aclose()  # its journal reader, before the store closes under it
    await app.store.close()
    print(json.dumps({"cpu_s": cpu, "wall_s": wall}), flush=True)

asyncio.run(main())
"""


@dataclass
class IdleTail:
    runs: int
    cpu_s: float
    wall_s: float

    @property
    def percent(self) -> float:
        """CPU time of the tailing process as a percentage of one core over the measured wall time."""
        return self.cpu_s / self.wall_s * 100


async def run_idle_tail(store_url: str, runs: int, seconds: float) -> IdleTail:
    """Another process tails ``runs`` runs that receive no chunks; its CPU time over ``seconds``."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _IDLE_TAIL_SCRIPT, store_url, str(runs), str(seconds), stdout=asyncio.subprocess.PIPE
    )
    stdout, _ = await asyncio.wait_for(process.communicate(), seconds + 120)
    if process.returncode != 0:
        raise RuntimeError(f"the idle tail failed ({process.returncode})")
    parsed = json.loads(stdout.strip().splitlines()[-1])
    return IdleTail(runs, float(parsed["cpu_s"]), float(parsed["wall_s"]))


async def run_tempo(
    app: App, server: TimedOpenAIServer, store_url: str, timeout: float, subprocess_tail: bool
) -> list[StreamRecord]:
    """One run tailed in this process (and from another process): one record per tail."""
    run_id = f"stream-{uuid.uuid4()}"
    process = await start_tail_process(store_url, run_id) if subprocess_tail else None
    arrivals: list[float] = []
    texts: list[str] = []

    async def tail() -> None:
        async for item in stream.full_stream:
            if isinstance(item, TextDeltaChunk):
                arrivals.append(now())
                texts.append(item.payload.text)

    cpu = time.process_time()
    started = now()
    stream = await app.stream(AGENT_ID, "Go.", run_id=run_id)
    await asyncio.wait_for(tail(), timeout)
    cpu_s = time.process_time() - cpu
    result = await stream.result()
    if result.finish_reason != "stop":
        raise RuntimeError(f"tempo-agents run ended with {result.finish_reason}: {result.error}")
    served = server.served[-1]
    records = [StreamRecord(TEMPO, started, arrivals, texts, served, cpu_s)]
    if process is not None:
        other_arrivals, other_texts = await finish_tail_process(process, 60)
        records.append(StreamRecord(SUBPROCESS, started, other_arrivals, other_texts, served))
    return records


# Statistics and printing -------------------------------------------------------------------------


def print_runs(records: Sequence[StreamRecord]) -> None:
    out(
        f"{'side':<28} {'start>request':>13} {'start>1st tok':>13} {'1st token':>9} {'lag p50':>8} {'lag p95':>8} "
        f"{'lag max':>8} {'last tok':>8} {'tok/s':>7} {'emit tok/s':>10} {'deliveries':>10} {'CPU ms/tok':>10}"
    )
    for r in records:
        lags = r.lags_ms
        out(
            f"{r.side:<28} {r.start_to_request_ms:>13.1f} {r.start_to_first_ms:>13.1f} {r.first_token_ms:>9.1f} "
            f"{quantile(lags, 0.5):>8.1f} {quantile(lags, 0.95):>8.1f} {max(lags):>8.1f} {r.last_token_ms:>8.1f} "
            f"{r.rate:>7.1f} {r.emit_rate:>10.1f} {r.deliveries:>10} "
            f"{'-' if r.cpu_per_token_ms is None else format(r.cpu_per_token_ms, '.3f'):>10}"
        )


@dataclass
class Figures:
    first_ms: float
    rate: float
    lag_p50: float
    lag_p95: float
    start_to_first_ms: float
    emit_rate: float
    cpu_per_token_ms: float | None


def figures(records: Sequence[StreamRecord]) -> Figures:
    """Medians over repeats; lags pooled over every token of every repeat."""
    lags = [lag for r in records for lag in r.lags_ms]
    return Figures(
        first_ms=median([r.first_token_ms for r in records]),
        rate=median([r.rate for r in records]),
        lag_p50=quantile(lags, 0.5),
        lag_p95=quantile(lags, 0.95),
        start_to_first_ms=median([r.start_to_first_ms for r in records]),
        emit_rate=median([r.emit_rate for r in records]),
        cpu_per_token_ms=None
        if any(r.cpu_per_token_ms is None for r in records)
        else median([r.cpu_per_token_ms or 0.0 for r in records]),
    )


def print_summary(by_side: Mapping[str, Figures], repeats: int) -> None:
    base = by_side[BASELINE]
    out()
    out(f"summary (median over {repeats} repeat(s); per-token lag = arrival minus the server's write, all tokens)")
    for side, f in by_side.items():
        if side == BASELINE:
            continue
        out()
        out(f"{'':<44} {side:>28} {BASELINE:>14} {'diff':>9} {'ratio':>7}")
        for label, a, b in (
            ("provider's first token to client, ms", f.first_ms, base.first_ms),
            ("client's start call to first token, ms", f.start_to_first_ms, base.start_to_first_ms),
            ("delivery rate, tokens/s", f.rate, base.rate),
            ("  the server's emit rate meanwhile, tokens/s", f.emit_rate, base.emit_rate),
            ("per-token lag p50, ms", f.lag_p50, base.lag_p50),
            ("per-token lag p95, ms", f.lag_p95, base.lag_p95),
        ):
            ratio = f"{a / b:.2f}x" if b else "-"
            out(f"{label:<44} {a:>28.1f} {b:>14.1f} {a - b:>+9.1f} {ratio:>7}")
        if f.cpu_per_token_ms is not None and base.cpu_per_token_ms is not None:
            a, b = f.cpu_per_token_ms, base.cpu_per_token_ms
            label = "CPU of this process per token, ms"
            out(f"{label:<44} {a:>28.3f} {b:>14.3f} {a - b:>+9.3f} {a / b if b else 0:>6.2f}x")


def quotable(kind: str, tokens: int, by_side: Mapping[str, Figures]) -> str:
    t, b = by_side[TEMPO], by_side[BASELINE]
    line = (
        f"stream_latency: store={kind} tokens={tokens} "
        f"first-token tempo={t.first_ms:.1f}ms baseline={b.first_ms:.1f}ms "
        f"(+{t.first_ms - b.first_ms:.1f}ms) rate tempo={t.rate:.1f}tok/s baseline={b.rate:.1f}tok/s "
        f"({t.rate / b.rate:.2f}x) lag p50 tempo={t.lag_p50:.1f}ms baseline={b.lag_p50:.1f}ms "
        f"p95 tempo={t.lag_p95:.1f}ms baseline={b.lag_p95:.1f}ms"
    )
    other = by_side.get(SUBPROCESS)
    if other is not None:
        line += (
            f" other-process first-token={other.first_ms:.1f}ms rate={other.rate:.1f}tok/s "
            f"lag p50={other.lag_p50:.1f}ms p95={other.lag_p95:.1f}ms"
        )
    return line


# Server ------------------------------------------------------------------------------------------


# Main --------------------------------------------------------------------------------------------


async def bench(args: argparse.Namespace) -> int:
    tokens: int = args.tokens
    delay = args.delay_ms / 1000
    pause = args.pause_ms / 1000 if args.pause_every else 0.0
    scripted_s = tokens * delay + (tokens - 1) // args.pause_every * pause if args.pause_every else tokens * delay
    timeout = scripted_s * 3 + RUN_TIMEOUT_MARGIN
    out(
        f"stream_latency: {tokens} tokens {args.delay_ms:g} ms apart"
        + (f", a {args.pause_ms:g} ms pause every {args.pause_every} tokens" if args.pause_every else "")
        + f" (~{scripted_s:.0f} s per stream), {args.repeats} repeat(s) per side; {os.cpu_count()} CPUs; "
        f"Python {sys.version.split()[0]}"
    )
    load = os.getloadavg()[0]
    out(f"load average (1 min) at start: {load:.2f}" + (busy_warning() if load > 0.3 else ""))
    kind = store_kind(args.store)
    out(f"store: {describe_store(args.store)}")
    watcher = (
        f"the SQLite store's watcher checks for other processes' appends every {POLL_INTERVAL * 1000:g} ms"
        if kind == "sqlite"
        else "other processes' readers wake on the PostgreSQL store's LISTEN/NOTIFY"
    )
    out(f"journal: text deltas batched every {TEXT_FLUSH_SECONDS * 1000:g} ms (TEXT_FLUSH_SECONDS); {watcher}")
    env = await start_server(args.db_file, stock=args.stock_server)
    records: list[StreamRecord] = []
    try:
        with (
            tempfile.TemporaryDirectory(prefix="tempo-bench-") as directory,
            bench_store(args.store, Path(directory)) as store,
        ):
            store_url = store.url
            with ProviderThread() as server:
                async with httpx.AsyncClient(timeout=timeout) as http:
                    model = openai_compatible(MODEL, base_url=server.base_url, api_key_env=None)
                    agent = Agent(id=AGENT_ID, instructions="Stream.", model=model)
                    app = App(agents=[agent], store=store_url, task_queue=f"bench-{uuid.uuid4()}", client=env.client)
                    async with app.worker():
                        # Warm-up, one short stream per side (imports, connection pools, the workflow's first task).
                        server.respond_with(lambda _: scripted_stream(20, delay, 0, 0.0))
                        await run_baseline(server, http)
                        await run_tempo(app, server, store_url, timeout, subprocess_tail=False)
                        server.respond_with(lambda _: scripted_stream(tokens, delay, args.pause_every, pause))
                        out()
                        for _ in range(args.repeats):
                            batch = [await run_baseline(server, http)]
                            batch += await run_tempo(app, server, store_url, timeout, not args.no_subprocess)
                            for record in batch:
                                record.check(tokens)
                            records += batch
                            print_runs(batch)
                    await app.store.close()
            journal_lags = await run_journal(store_url, args.journal_chunks) if args.journal_chunks else []
            idle = await run_idle_tail(store_url, args.idle_runs, args.idle_seconds) if args.idle_runs else None
    finally:
        await env.shutdown()
    by_side = {side: figures([r for r in records if r.side == side]) for side in (TEMPO, SUBPROCESS, BASELINE)}
    by_side = {side: f for side, f in by_side.items() if any(r.side == side for r in records)}
    print_summary(by_side, args.repeats)
    behind = [
        (o - t) * 1000
        for tempo, other in zip(
            [r for r in records if r.side == TEMPO], [r for r in records if r.side == SUBPROCESS], strict=False
        )
        for t, o in zip(tempo.arrivals, other.arrivals, strict=True)
    ]
    if behind:
        out(
            f"{'  other process behind the in-process tail, p50/p95, ms':<60} "
            f"{quantile(behind, 0.5):.1f} / {quantile(behind, 0.95):.1f}"
        )
    load = os.getloadavg()[0]
    out()
    out(f"load average (1 min) at the end: {load:.2f}" + (busy_warning() if load > 2.5 else ""))
    if journal_lags:
        out(
            f"stream_latency journal: store={kind} chunks={len(journal_lags)} other-process lag "
            f"p50={quantile(journal_lags, 0.5):.1f}ms p95={quantile(journal_lags, 0.95):.1f}ms "
            f"max={max(journal_lags):.1f}ms"
        )
    if idle is not None:
        out(
            f"stream_latency idle tail: store={kind} runs={idle.runs} seconds={idle.wall_s:.1f} "
            f"cpu={idle.percent:.2f}% of one core "
            f"({idle.cpu_s * 1000:.0f}ms CPU)"
        )
    out(quotable(kind, tokens, by_side))
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per stream (default 2000)")
    parser.add_argument("--delay-ms", type=float, default=10.0, help="milliseconds before each token (default 10)")
    parser.add_argument("--pause-every", type=int, default=0, help="pause after every N tokens (default: never)")
    parser.add_argument("--pause-ms", type=float, default=500.0, help="length of those pauses, ms (default 500)")
    parser.add_argument("--repeats", type=int, default=1, help="streams per side, interleaved (default 1)")
    parser.add_argument("--no-subprocess", action="store_true", help="skip the tail from another process")
    add_dev_server_arguments(parser)
    add_store_argument(parser)
    parser.add_argument(
        "--journal-chunks", type=int, default=500, help="chunks appended straight to the journal (default 500; 0: skip)"
    )
    parser.add_argument(
        "--idle-runs", type=int, default=100, help="runs tailed by the idle tail (default 100; 0: skip)"
    )
    parser.add_argument(
        "--idle-seconds", type=float, default=10.0, help="how long the idle tail is measured (default 10)"
    )
    args = parser.parse_args(argv)
    if args.journal_chunks < 0 or args.idle_runs < 0 or args.idle_seconds <= 0:
        parser.error("need --journal-chunks >= 0, --idle-runs >= 0 and --idle-seconds > 0")
    if args.tokens < 2 or args.delay_ms < 0 or args.pause_every < 0 or args.pause_ms < 0 or args.repeats < 1:
        parser.error("need --tokens >= 2, --repeats >= 1 and no negative delays")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("stream_latency")
