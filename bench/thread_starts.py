"""Starts of threadless runs (which must not pay for threads) and the start latency of a run on a memory thread.

    python bench/thread_starts.py [--runs 300] [--concurrency 10] [--serial 40] [--threadless-only]
                                  [--db-file PATH] [--stock-server]

One App (SQLite store in a temporary directory, a worker in this process, an agent whose model answers at once) on
the embedded dev server:

- threadless starts/s: ``--runs`` calls of ``app.stream(...)`` without memory, ``--concurrency`` at a time; the clock
  stops when the last call returned (the runs then finish before the next phase). The baseline: the same number of
  ``client.start_workflow`` of bench/_bare.py's no-op workflow (one activity), same concurrency, on a worker of
  its own. Run this script from a checkout of an earlier commit with ``--threadless-only`` for the before figure.
- thread start latency (``--serial`` one at a time, unloaded): ``app.stream`` with ``memory`` on a new thread (the
  thread's workflow is started by the same update-with-start) and on a thread whose workflow runs idle, against a
  threadless ``app.stream`` and a bare ``start_workflow``; p50 and p95 of the call's duration (the call returns once
  the run is started or queued, with the ``start`` chunk journaled, as a threadless start does).

The last line is quotable::

    thread_starts: threadless starts/s=.. bare=.. (..x) start p50 threadless=..ms new-thread=..ms
    idle-thread=..ms bare=..ms p95 threadless=..ms new-thread=..ms idle-thread=..ms bare=..ms
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from temporalio.worker import Worker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `bench`, from any directory

from bench._bare import BareRun, noop
from bench._common import (
    add_dev_server_arguments,
    bench_parser,
    busy_warning,
    median,
    out,
    quantile,
    run_as_module,
    start_server,
)
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse


async def _rate(count: int, concurrency: int, start: Callable[[int], Awaitable[object]]) -> float:
    """Calls of ``start`` per second, ``concurrency`` at a time."""
    limit = asyncio.Semaphore(concurrency)

    async def one(n: int) -> object:
        async with limit:
            return await start(n)

    began = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(count)))
    return count / (time.perf_counter() - began)


async def _latencies(count: int, start: Callable[[int], Awaitable[object]]) -> list[float]:
    """Milliseconds of each of ``count`` calls of ``start``, one at a time."""
    times = []
    for n in range(count):
        began = time.perf_counter()
        await start(n)
        times.append((time.perf_counter() - began) * 1000)
    return times


async def bench(args: argparse.Namespace) -> int:
    began = time.perf_counter()
    env = await start_server(args.db_file, stock=args.stock_server)
    try:
        with tempfile.TemporaryDirectory() as folder:
            app = App(
                agents=[Agent(id="echo", model=ScriptedModel(lambda request: ScriptedResponse(text="ok")))],
                store=f"sqlite:///{Path(folder) / 'store.db'}",
                task_queue=f"bench-{uuid.uuid4()}",
                client=env.client,
            )
            bare_queue = f"bare-{uuid.uuid4()}"
            bare_worker = Worker(env.client, task_queue=bare_queue, workflows=[BareRun], activities=[noop])
            streams: list[object] = []

            async def threadless(n: int) -> object:
                stream = await app.stream("echo", "hi")
                streams.append(stream)
                return stream

            async def bare(n: int) -> object:
                return await env.client.start_workflow(
                    BareRun.run, [1], id=f"bare-{uuid.uuid4()}", task_queue=bare_queue
                )

            async with app.worker(), bare_worker:
                for n in range(5):  # warm-up
                    await (await app.stream("echo", "hi")).result()
                    await bare(n)
                out(f"threadless starts: {args.runs} runs, {args.concurrency} at a time")
                rate = await _rate(args.runs, args.concurrency, threadless)
                await asyncio.gather(*(s.result() for s in streams))  # type: ignore[attr-defined]
                bare_rate = await _rate(args.runs, args.concurrency, bare)
                out(f"  threadless {rate:.1f}/s, bare start_workflow {bare_rate:.1f}/s ({rate / bare_rate:.2f}x)")
                if args.threadless_only:
                    out(f"thread_starts: threadless starts/s={rate:.1f} bare={bare_rate:.1f} ({rate / bare_rate:.2f}x)")
                    return 0

                out(f"start latency: {args.serial} starts of each kind, one at a time")
                solo = await _latencies(args.serial, threadless)
                bare_solo = await _latencies(args.serial, bare)

                async def new_thread(n: int) -> object:
                    stream = await app.stream("echo", "hi", memory={"thread": f"new-{n}", "resource": "bench"})
                    streams.append(stream)
                    return stream

                fresh = await _latencies(args.serial, new_thread)
                await asyncio.gather(*(s.result() for s in streams))  # type: ignore[attr-defined]

                idle_times = []
                for n in range(args.serial):
                    await asyncio.sleep(0.05)  # the thread's workflow has heard its run end
                    began_one = time.perf_counter()
                    stream = await app.stream("echo", "hi", memory={"thread": f"new-{n}", "resource": "bench"})
                    idle_times.append((time.perf_counter() - began_one) * 1000)
                    await stream.result()
                rows = [("threadless", solo), ("new-thread", fresh), ("idle-thread", idle_times), ("bare", bare_solo)]
                for name, times in rows:
                    out(f"  {name:<12} p50 {median(times):6.1f} ms  p95 {quantile(times, 0.95):6.1f} ms")
    finally:
        await env.shutdown()
    load = os.getloadavg()[0]
    out(f"load average (1 min) at the end: {load:.2f}" + (busy_warning() if load > 2.5 else ""))
    out(f"total time: {time.perf_counter() - began:.0f} s")
    p50 = " ".join(f"{name}={median(times):.1f}ms" for name, times in rows)
    p95 = " ".join(f"{name}={quantile(times, 0.95):.1f}ms" for name, times in rows)
    starts = f"threadless starts/s={rate:.1f} bare={bare_rate:.1f} ({rate / bare_rate:.2f}x)"
    out(f"thread_starts: {starts} start p50 {p50} p95 {p95}")
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--runs", type=int, default=300, help="threadless starts to time (default 300)")
    parser.add_argument("--concurrency", type=int, default=10, help="starts in flight at once (default 10)")
    parser.add_argument("--serial", type=int, default=40, help="starts of each kind timed one at a time (default 40)")
    parser.add_argument("--threadless-only", action="store_true", help="only the threadless starts/s (any commit)")
    add_dev_server_arguments(parser)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.concurrency < 1 or args.serial < 1:
        parser.error("need --runs, --concurrency and --serial >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("thread_starts")
