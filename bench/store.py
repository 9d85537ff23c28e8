"""The two stores side by side: how fast chunks are appended, and how late readers in another process see them.

    python bench/store.py [--chunks 2000] [--runs 100] [--writers 4] [--readers 100] [--tail-chunks 300]
                          [--interval-ms 10] [--stores sqlite,postgresql]

For each store (SQLite in a temporary file; PostgreSQL on a throwaway server this script starts in a temporary
directory, tests/support/postgres_server.py, with ``fsync=off`` like the tests' server):

- append, 1 writer: this process appends ``--chunks`` chunks to one run, one ``append_chunks`` call each
  (a text delta at a time: the worst case; the model step batches deltas), and reports chunks per second;
- append, R runs at once: this process appends ``--chunks`` chunks spread over ``--runs`` runs, each run's one at a
  time (as many streaming runs of one worker do), all runs at once; chunks per second and this process's CPU time
  a chunk (SQLite's writer thread included: a group commit takes the appends queued meanwhile in one transaction);
- append, N processes: ``--writers`` processes append ``--chunks`` / N chunks each to the same run at once
  (offsets stay contiguous: the per-run lock of PostgreSQL, SQLite's write lock); chunks per second from the
  first process's first append to the last one's last;
- reader lag: another process runs ``--readers`` readers tailing one run (``read_chunks`` then
  ``wait_for_chunks``, as ``App.attach`` does) while this process appends ``--tail-chunks`` chunks
  ``--interval-ms`` apart; the lag of a chunk for a reader is the time it had it (after ``read_chunks``
  returned) minus the time its ``append_chunks`` returned here, on one clock (``CLOCK_MONOTONIC``); p50, p95 and
  max over every (reader, chunk), and the reading process's CPU time as a share of one core.

The last lines are quotable, one per store::

    store: sqlite append=..chunks/s (100 runs ..chunks/s ..us CPU a chunk; 4 processes ..chunks/s)
    lag p50=..ms p95=..ms (100 readers)

(one line each; shown here on two).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support.postgres_server, from any directory

from bench._common import bench_parser, busy_warning, median, out, quantile
from tempo_agents.store import ChunkWrite, open_store
from tests.support.postgres_server import PostgresServer, find_bindir

ROOT = Path(__file__).resolve().parent.parent


def now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


_APPENDER = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from tempo_agents.store import ChunkWrite, open_store

    async def main(url, run_id, count):
        store = open_store(url)
        await store.read_chunks(run_id)  # connected and ready before the clock starts
        print("ready", flush=True)
        sys.stdin.readline()
        start = time.clock_gettime(time.CLOCK_MONOTONIC)
        for i in range(count):
            await store.append_chunks(run_id, [ChunkWrite({"type": "text-delta", "payload": {"i": i}})])
        end = time.clock_gettime(time.CLOCK_MONOTONIC)
        await store.close()
        print(json.dumps([start, end]), flush=True)

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)

_TAILER = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from tempo_agents.store import open_store

    async def main(url, run_id, readers, expected):
        store = open_store(url)
        await store.read_chunks(run_id)
        arrivals = [[] for _ in range(readers)]

        async def tail(mine):
            offset = 0
            while offset < expected:
                entries = await store.read_chunks(run_id, offset)
                at = time.clock_gettime(time.CLOCK_MONOTONIC)
                mine += [(e.offset, at) for e in entries]
                offset += len(entries)
                if not entries:
                    await store.wait_for_chunks(run_id, offset, timeout=5.0)

        cpu = time.process_time()
        tails = [asyncio.create_task(tail(mine)) for mine in arrivals]
        await asyncio.sleep(0.5)
        print("ready", flush=True)
        await asyncio.gather(*tails)
        cpu = time.process_time() - cpu
        await store.close()
        print(json.dumps({"arrivals": arrivals, "cpu": cpu}), flush=True)

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    """
)


async def spawn(script: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
        limit=2**26,
    )


async def expect_line(process: asyncio.subprocess.Process, text: str) -> None:
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), 120)).decode().strip()
    if line != text:
        raise RuntimeError(f"expected {text!r} from a bench process, got {line!r}")


async def last_json(process: asyncio.subprocess.Process) -> object:
    stdout, _ = await asyncio.wait_for(process.communicate(), 600)
    if process.returncode != 0:
        raise RuntimeError(f"a bench process failed ({process.returncode})")
    return json.loads(stdout.decode().strip().splitlines()[-1])


@dataclass
class Figures:
    store: str
    append_rate: float
    parallel_rate: float
    runs_rate: float
    runs_cpu_us: float
    lags_ms: list[float]
    reader_cpu: float
    tail_seconds: float


async def measure(name: str, url: str, args: argparse.Namespace) -> Figures:
    store = open_store(url)
    await store.read_chunks("warm-up")
    for i in range(50):
        await store.append_chunks("warm-up", [ChunkWrite({"type": "text-delta", "payload": {"i": i}})])

    started = now()
    for i in range(args.chunks):
        await store.append_chunks("one-writer", [ChunkWrite({"type": "text-delta", "payload": {"i": i}})])
    append_rate = args.chunks / (now() - started)

    per_run = max(1, args.chunks // args.runs)

    async def one_run(run: int) -> None:
        for i in range(per_run):
            await store.append_chunks(f"run-{run}", [ChunkWrite({"type": "text-delta", "payload": {"i": i}})])

    started, cpu = now(), time.process_time()
    await asyncio.gather(*(one_run(run) for run in range(args.runs)))
    runs_rate = per_run * args.runs / (now() - started)
    runs_cpu_us = (time.process_time() - cpu) / (per_run * args.runs) * 1e6

    each = max(1, args.chunks // args.writers)
    writers = [await spawn(_APPENDER, url, "many-writers", str(each)) for _ in range(args.writers)]
    for writer in writers:
        await expect_line(writer, "ready")
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write(b"go\n")
        await writer.stdin.drain()
    spans = [await last_json(writer) for writer in writers]
    starts = [float(span[0]) for span in spans if isinstance(span, list)]
    ends = [float(span[1]) for span in spans if isinstance(span, list)]
    parallel_rate = each * args.writers / (max(ends) - min(starts))
    entries = await store.read_chunks("many-writers", 0, limit=each * args.writers + 1)
    if [e.offset for e in entries] != list(range(each * args.writers)):
        raise RuntimeError(f"{name}: offsets of concurrent writers are not contiguous")

    tailer = await spawn(_TAILER, url, "tailed", str(args.readers), str(args.tail_chunks))
    await expect_line(tailer, "ready")
    committed: dict[int, float] = {}
    tail_started = now()
    for i in range(args.tail_chunks):
        [offset] = await store.append_chunks("tailed", [ChunkWrite({"type": "text-delta", "payload": {"i": i}})])
        committed[offset] = now()
        await asyncio.sleep(args.interval_ms / 1000)
    result = await last_json(tailer)
    tail_seconds = now() - tail_started
    assert isinstance(result, dict)
    lags = [(at - committed[offset]) * 1000 for mine in result["arrivals"] for offset, at in mine]
    await store.close()
    return Figures(name, append_rate, parallel_rate, runs_rate, runs_cpu_us, lags, float(result["cpu"]), tail_seconds)


def report(figures: Sequence[Figures], args: argparse.Namespace) -> None:
    out("")
    out(
        f"{'store':<11} {'append 1 writer':>16} {f'append {args.runs} runs':>16} {'CPU a chunk':>12} "
        f"{f'append {args.writers} procs':>16} "
        f"{'lag p50':>9} {'lag p95':>9} {'lag max':>9} {'reader CPU':>11}"
    )
    for f in figures:
        cpu = 100 * f.reader_cpu / f.tail_seconds
        out(
            f"{f.store:<11} {f.append_rate:>10.0f} chk/s {f.runs_rate:>10.0f} chk/s {f.runs_cpu_us:>10.0f}us "
            f"{f.parallel_rate:>10.0f} chk/s "
            f"{quantile(f.lags_ms, 0.5):>7.1f}ms {quantile(f.lags_ms, 0.95):>7.1f}ms {max(f.lags_ms):>7.1f}ms "
            f"{cpu:>10.1f}%"
        )
    out("")
    for f in figures:
        out(
            f"store: {f.store} append={f.append_rate:.0f}chunks/s ({args.runs} runs {f.runs_rate:.0f}chunks/s "
            f"{f.runs_cpu_us:.0f}us CPU a chunk; {args.writers} processes "
            f"{f.parallel_rate:.0f}chunks/s) lag p50={quantile(f.lags_ms, 0.5):.1f}ms "
            f"p95={quantile(f.lags_ms, 0.95):.1f}ms ({args.readers} readers, median {median(f.lags_ms):.1f}ms)"
        )


async def bench(args: argparse.Namespace) -> int:
    out(f"store bench: load average {os.getloadavg()[0]:.1f} at start{busy_warning()}")
    figures: list[Figures] = []
    with tempfile.TemporaryDirectory(prefix="tempo-agents-bench-") as scratch:
        for name in args.stores:
            if name == "sqlite":
                figures.append(await measure(name, f"sqlite:///{Path(scratch) / 'store.db'}", args))
            else:
                bindir = find_bindir()
                if bindir is None:
                    out("postgresql: not installed (apt-get install postgresql), skipped")
                    continue
                server = PostgresServer(bindir)
                try:
                    figures.append(await measure(name, server.create_database(), args))
                finally:
                    server.stop()
            out(f"{name}: done")
    report(figures, args)
    out(f"load average {os.getloadavg()[0]:.1f} at end")
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--chunks", type=int, default=2000, help="chunks appended for the rates (default 2000)")
    parser.add_argument("--runs", type=int, default=100, help="runs appending at once in this process (default 100)")
    parser.add_argument("--writers", type=int, default=4, help="writer processes appending at once (default 4)")
    parser.add_argument("--readers", type=int, default=100, help="tailing readers in the other process (default 100)")
    parser.add_argument("--tail-chunks", type=int, default=300, help="chunks appended while tailed (default 300)")
    parser.add_argument("--interval-ms", type=float, default=10.0, help="gap between tailed appends (default 10)")
    parser.add_argument(
        "--stores",
        type=lambda text: [s.strip() for s in text.split(",") if s.strip()],
        default=["sqlite", "postgresql"],
        help="which stores, in order (default sqlite,postgresql)",
    )
    args = parser.parse_args(argv)
    counts = (args.chunks, args.runs, args.writers, args.readers, args.tail_chunks)
    if min(counts) < 1 or args.interval_ms < 0:
        parser.error("need positive --chunks, --runs, --writers, --readers and --tail-chunks")
    if not set(args.stores) <= {"sqlite", "postgresql"}:
        parser.error("--stores takes sqlite and postgresql")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
