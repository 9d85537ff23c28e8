"""Where the time of an agent step goes: tailing cost, activity bodies, store calls and SQLite commits.

    python bench/profile_step.py [--steps 20] [--runs 5] [--db-file PATH]

Runs the agent of ``bench/step_overhead.py`` (one no-op tool per step), instrumented: the cost of tailing the
journal in this process, activity body times from a worker interceptor, store calls and SQLite commits per
step, and a store micro-benchmark. Figures only; the ratio against bare Temporal is step_overhead.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import functools
import inspect
import os
import re
import sqlite3
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `bench`, from any directory

from bench._common import add_dev_server_arguments, bench_parser, busy_warning, median, out, run_as_module, start_server
from bench.step_overhead import FINISH, MODEL, TOOL, RunRecord, build_app, ms_summary, p90, role_of, run_tempo
from tempo_agents import App
from tempo_agents.store.base import ChunkWrite, Store, TranscriptEntry
from tempo_agents.store.sqlite import SQLiteStore


def _caller() -> str:
    """Who is calling: the role of the running activity, else the client tailing the journal."""
    if not activity.in_activity():
        return "client (stream)"
    info = activity.info()
    return role_of(info.activity_type) + (" (local)" if info.is_local else "")


@dataclass(frozen=True)
class StoreCall:
    caller: str
    method: str
    seconds: float
    items: int


_WRITE = re.compile(r"^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", re.IGNORECASE)


_IN_STORE_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar("in_store_call", default=False)


class StoreProfile:
    """Times every public coroutine method of one SQLite store, whatever the Store interface holds today,
    and counts SQLite statements and commits by table (a trace callback on the store's connection)."""

    SKIPPED = frozenset({"close", "wait_for_chunks"})

    def __init__(self, store: SQLiteStore) -> None:
        self.calls: list[StoreCall] = []
        self.commits: dict[str, int] = defaultdict(int)
        self.statements = 0
        self.counting_commits = False
        self._transaction: str | None = None
        self._in_transaction = False
        for name in dir(Store):
            method = getattr(store, name, None)
            if name.startswith("_") or name in self.SKIPPED or not inspect.iscoroutinefunction(method):
                continue
            setattr(store, name, self._timed(name, method))
        connect = getattr(store, "_connect", None)
        if callable(connect):  # private: if it is renamed, commits are simply not counted
            self.counting_commits = True
            setattr(store, "_connect", self._traced(connect))  # noqa: B010

    def reset(self) -> None:
        self.calls.clear()
        self.commits.clear()
        self.statements = 0

    def _timed(self, name: str, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(method)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            if _IN_STORE_CALL.get():  # a store method calling another: count the outer call only
                return await method(*args, **kwargs)
            token = _IN_STORE_CALL.set(True)
            caller, start = _caller(), time.perf_counter()
            try:
                return await method(*args, **kwargs)
            finally:
                _IN_STORE_CALL.reset(token)
                items = sum(len(a) for a in args if isinstance(a, list | tuple))
                self.calls.append(StoreCall(caller, name, time.perf_counter() - start, items))

        return timed

    def _traced(self, connect: Callable[[], sqlite3.Connection]) -> Callable[[], sqlite3.Connection]:
        traced: set[int] = set()

        def wrapper() -> sqlite3.Connection:
            connection = connect()
            if id(connection) not in traced:
                traced.add(id(connection))
                connection.set_trace_callback(self._trace)
            return connection

        return wrapper

    def _trace(self, statement: str) -> None:
        self.statements += 1
        head = statement.lstrip()[:8].upper()
        write = _WRITE.match(statement)
        if head.startswith("BEGIN"):
            self._in_transaction, self._transaction = True, None
        elif head.startswith(("COMMIT", "END")):
            self.commits[self._transaction or "(nothing written)"] += 1
            self._in_transaction = False
        elif head.startswith("ROLLBACK"):
            self._in_transaction = False
        elif write and self._in_transaction:
            self._transaction = self._transaction or write.group(1)
        elif write:
            self.commits[write.group(1)] += 1  # autocommit: every write statement is its own transaction


@dataclass(frozen=True)
class BodyTime:
    role: str
    step: int
    seconds: float


class BodyTimer(Interceptor):
    """A worker interceptor timing each activity body (arguments already decoded, result not yet encoded)."""

    def __init__(self) -> None:
        self.times: list[BodyTime] = []

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _BodyTimerInbound(next, self.times)


class _BodyTimerInbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, times: list[BodyTime]) -> None:
        super().__init__(next)
        self._times = times

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        step = getattr(input.args[0], "step", -1) if input.args else -1
        start = time.perf_counter()
        try:
            return await super().execute_activity(input)
        finally:
            self._times.append(BodyTime(_caller(), int(step), time.perf_counter() - start))


async def profile_tailing(app: App, client: Client, steps: int, runs: int) -> None:
    """tempo-agents runs waited on with and without reading the journal (the same worker, interleaved)."""
    tailed: list[RunRecord] = []
    untailed: list[RunRecord] = []
    for number in range(runs):
        tailed.append(await run_tempo(app, client, steps, number, False))
        untailed.append(await run_tempo(app, client, steps, number, False, tail=False))
    out()
    out(f"profile: cost of tailing the journal in this process ({runs} runs each, interleaved; to workflow closed)")
    for label, records in (
        ("stream.result(), then handle.result()", tailed),
        ("handle.result() only, journal not read", untailed),
    ):
        wall = [r.closed_per_step_ms for r in records]
        cpu = [r.process_cpu_s * 1000 / steps for r in records]
        out(f"{label:<42} {median(wall):>7.2f} ms/step (p90 {p90(wall):.2f}), CPU {median(cpu):.2f} ms/step")


async def profile(client: Client, tmp: Path, steps: int, runs: int) -> None:
    """Instrumented tempo-agents runs (after one warm-up), then a store micro-benchmark."""
    store = SQLiteStore(tmp / "profile.db")
    store_profile = StoreProfile(store)
    app = build_app(steps, store, f"bench-profile-{uuid.uuid4()}", client)
    timer = BodyTimer()
    walls: list[float] = []
    async with app.worker(interceptors=[timer]):
        await run_tempo(app, client, steps, 0, True)
        store_profile.reset()
        timer.times.clear()
        for number in range(runs):
            walls.append((await run_tempo(app, client, steps, number, False)).per_step_ms)
    await store.close()

    out()
    out(
        f"profile: {runs} instrumented tempo-agents runs of {steps} steps (after 1 warm-up); "
        f"median {median(walls):.2f} ms/step"
    )
    out("activity bodies (worker interceptor: arguments decoded, result not yet encoded), ms")
    out(
        f"{'activity':<22} {'calls/run':>9} {'med/call':>8} {'p90/call':>8} {'per step':>8} "
        f"{'med, first 25% of steps':>23} {'med, last 25%':>13}"
    )
    quarter = max(1, steps // 4)
    body_per_step = 0.0
    order = {MODEL: 0, TOOL: 1, FINISH: 2}
    for role in sorted({t.role for t in timer.times}, key=lambda r: (order.get(r, 3), r)):
        times = [t for t in timer.times if t.role == role]
        call_ms = [t.seconds * 1000 for t in times]
        per_step = sum(call_ms) / runs / steps
        body_per_step += per_step
        early = ms_summary([t.seconds * 1000 for t in times if 0 <= t.step < quarter])
        late = ms_summary([t.seconds * 1000 for t in times if t.step >= steps - quarter])
        out(
            f"{role:<22} {len(times) / runs:>9.1f} {median(call_ms):>8.2f} {p90(call_ms):>8.2f} {per_step:>8.2f} "
            f"{early:>23} {late:>13}"
        )
    out(f"{'all bodies':<22} {'':>9} {'':>8} {'':>8} {body_per_step:>8.2f}")

    out()
    out("store calls (time as the event loop sees it: executor hop + queueing behind other calls + SQLite)")
    out(f"{'caller':<22} {'method':<18} {'calls/step':>10} {'ms/call':>8} {'ms/step':>8} {'items/step':>10}")
    groups: dict[tuple[str, str], list[StoreCall]] = defaultdict(list)
    for call in store_profile.calls:
        groups[(call.caller, call.method)].append(call)
    totals = [0.0, 0.0, 0.0]
    denominator = runs * steps
    for (caller, method), calls in sorted(groups.items()):
        figures = (len(calls), sum(c.seconds for c in calls) * 1000, sum(c.items for c in calls))
        out(
            f"{caller:<22} {method:<18} {figures[0] / denominator:>10.2f} {figures[1] / figures[0]:>8.3f} "
            f"{figures[1] / denominator:>8.3f} {figures[2] / denominator:>10.2f}"
        )
        if not caller.startswith("client"):
            totals = [total + figure for total, figure in zip(totals, figures, strict=True)]
    out(
        f"{'all activities':<22} {'':<18} {totals[0] / denominator:>10.2f} {'':>8} "
        f"{totals[1] / denominator:>8.3f} {totals[2] / denominator:>10.2f}"
    )
    if store_profile.counting_commits:
        by_table = ", ".join(f"{table} {n / denominator:.2f}" for table, n in sorted(store_profile.commits.items()))
        all_commits = sum(store_profile.commits.values()) / denominator
        out(
            f"SQLite per step, write connection: {store_profile.statements / denominator:.1f} statements, "
            f"{all_commits:.2f} commits (by the first table each one writes: {by_table})"
        )
    await store_microbench(tmp / "micro.db")


async def _per_call_ms(count: int, work: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    for _ in range(count):
        await work()
    return (time.perf_counter() - start) * 1000 / count


async def store_microbench(path: Path, count: int = 200) -> None:
    """The store's operations one at a time on a fresh file, and a bare executor hop for scale."""
    store = SQLiteStore(path)
    run_id = "micro"
    message = {"role": "assistant", "content": [{"type": "text", "text": "Step 1."}]}
    chunk = {"type": "step-start", "runId": run_id, "from": "AGENT", "payload": {"stepNumber": 1, "warnings": []}}
    await store.put_transcript(run_id, [TranscriptEntry(i, "assistant", 0, message) for i in range(40)])
    executor = ThreadPoolExecutor(max_workers=1)
    loop = asyncio.get_running_loop()
    counter = iter(range(10**9))
    figures = {
        "executor hop (run_in_executor, no-op)": await _per_call_ms(
            count, lambda: loop.run_in_executor(executor, lambda: None)
        ),
        "append_chunks, 1 keyless chunk": await _per_call_ms(
            count, lambda: store.append_chunks(run_id, [ChunkWrite(chunk)])
        ),
        "append_chunks, 1 keyed chunk": await _per_call_ms(
            count, lambda: store.append_chunks(run_id, [ChunkWrite(chunk, f"k{next(counter)}")])
        ),
        "put_transcript, 1 entry": await _per_call_ms(
            count, lambda: store.put_transcript(run_id, [TranscriptEntry(100 + next(counter), "tool", 1, message)])
        ),
        "put_transcript, 2 entries": await _per_call_ms(
            count,
            lambda: store.put_transcript(
                run_id, [TranscriptEntry(100 + next(counter), p, i, message) for i, p in enumerate(("a", "b"))]
            ),
        ),
        "read_chunks at the end of a journal": await _per_call_ms(count, lambda: store.read_chunks(run_id, 10**6)),
    }
    await store.close()
    fresh = SQLiteStore(path.with_name("micro-transcript.db"))
    for size in (2, 20, 40, 200):
        transcript_id = f"t{size}"
        await fresh.put_transcript(transcript_id, [TranscriptEntry(i, "assistant", 0, message) for i in range(size)])
        figures[f"get_transcript, {size} entries"] = await _per_call_ms(
            count, functools.partial(fresh.get_transcript, transcript_id)
        )
    await fresh.close()
    executor.shutdown()
    out()
    out(f"store micro-benchmark (fresh SQLite file, WAL, one call at a time, mean of {count})")
    for name, value in figures.items():
        out(f"{name:<40} {value:>8.3f} ms")


# Main --------------------------------------------------------------------------------------------


async def main_async(args: argparse.Namespace) -> int:
    out(f"profile_step: {args.steps} steps per run, {args.runs} instrumented runs; {os.cpu_count()} CPUs")
    load = os.getloadavg()[0]
    out(f"load average (1 min) at start: {load:.2f}" + (busy_warning() if load > 0.3 else ""))
    env = await start_server(args.db_file, stock=False)
    try:
        with tempfile.TemporaryDirectory(prefix="tempo-profile-") as directory:
            tmp = Path(directory)
            app = build_app(args.steps, f"sqlite:///{tmp / 'store.db'}", f"bench-{uuid.uuid4()}", env.client)
            async with app.worker():
                await run_tempo(app, env.client, args.steps, 0, True)
                await profile_tailing(app, env.client, args.steps, args.runs)
            await app.store.close()
            await profile(env.client, tmp, args.steps, args.runs)
    finally:
        await env.shutdown()
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--steps", type=int, default=20, help="model steps per agent run (default 20)")
    parser.add_argument("--runs", type=int, default=5, help="instrumented runs (default 5)")
    add_dev_server_arguments(parser, stock_server=False)
    args = parser.parse_args(argv)
    if args.steps < 2 or args.runs < 1:
        parser.error("need --steps >= 2, --runs >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(main_async(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("profile_step")
