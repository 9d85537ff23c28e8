"""Where a run's CPU goes in tempo-agents' process, under the load of ``vs_reference.py``.

    python bench/profile_run.py [--config activities] [--runs 400] [--concurrency 20] [--rate 200] [--keep PATH]

Starts tempo-agents as ``vs_reference.py`` does (``bench/_tempo_side.py``: the embedded dev server, the worker and
the HTTP API in one process, serving ``bench/vs_reference_app.py`` with the chosen configuration), warms it up,
then runs ``--runs`` two-step tool runs through ``POST /api/agents/assistant/stream`` by ``--concurrency`` clients
while py-spy samples that process ``--rate`` times a second, keeping only the samples of a thread that holds the GIL
(``--gil``): Python's own work. What the Temporal core (Rust), SQLite and the kernel do without the GIL is the rest
of the process's CPU, read from ``/proc`` before and after.

Prints the CPU per run of the process and the share of it spent holding the GIL; the GIL samples by the package
of their innermost frame (temporalio, asyncio, tempo_agents, pydantic, json, the HTTP stack ...); the same by part of
the run (workflow activations, activities, the SQLite store's threads, HTTP requests, the SSE relay, the event
loop); and tempo-agents' functions by inclusive share. py-spy is the bench extra's; it needs to be allowed to read
another process's memory (``ptrace``: same user, or root).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `bench`, from any directory

from bench._common import bench_parser, busy_warning, out, process_cpu_seconds, run_as_module
from bench.vs_reference import CONFIGS, TempoSide, http_run

PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("SQLite store threads", ("tempo_agents/store/sqlite/connections.py", "tempo_agents/store/sqlite/watcher.py")),
    ("workflow activations", ("temporalio/worker/_workflow.py", "temporalio/worker/_workflow_instance.py")),
    ("activities", ("temporalio/worker/_activity.py",)),
    ("SSE relay", ("tempo_agents/server/sse.py", "tempo_agents/streams/")),
    ("HTTP requests", ("uvicorn/", "starlette/", "fastapi/")),
    ("Temporal client calls", ("temporalio/client/", "temporalio/bridge/client.py")),
    ("worker polling", ("temporalio/bridge/worker.py",)),
)
"""The parts of a run a sample is counted in: the first whose marker is in any frame of its stack, outermost first."""


def _stacks(path: Path) -> Iterable[tuple[list[str], int]]:
    """py-spy's raw format: ``frame;frame;... count`` a line, outermost frame first."""
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack:
            yield [re.sub(r":\d+\)$", ")", frame) for frame in stack.split(";")], int(count)


def _package(frame: str) -> str:
    found = re.search(r"\(([^()]*)\)$", frame)
    where = found.group(1) if found else ""
    return where.split("/")[0] if "/" in where else where or "?"


def _part(frames: list[str]) -> str:
    text = ";".join(frames)
    for part, markers in PARTS:
        if any(marker in text for marker in markers):
            return part
    return "event loop and the rest"


def report(path: Path, cpu_ms: float, runs: int, seconds: float, rate: int) -> None:
    """The three tables of the module docstring, from py-spy's raw samples."""
    total = 0
    packages: collections.Counter[str] = collections.Counter()
    parts: collections.Counter[str] = collections.Counter()
    ours: collections.Counter[str] = collections.Counter()
    for frames, count in _stacks(path):
        total += count
        packages[_package(frames[-1])] += count
        parts[_part(frames)] += count
        for frame in set(frames):
            if "tempo_agents/" in frame:
                ours[frame] += count
    held_ms = total / rate * 1000 / runs
    out(f"CPU per run of the process: {cpu_ms:.1f} ms; holding the GIL: {held_ms:.1f} ms ({held_ms / cpu_ms:.0%})")
    out(f"{total} samples of a thread holding the GIL over {seconds:.1f} s at {rate}/s")
    for title, counter, top in (("innermost frame's package", packages, 12), ("part of the run", parts, 12)):
        out(f"\nby {title} (% of the GIL samples, ms a run):")
        for name, count in counter.most_common(top):
            out(f"  {100 * count / total:5.1f}%  {count / rate * 1000 / runs:5.1f} ms  {name}")
    out("\ntempo-agents' functions, inclusive (% of the GIL samples):")
    for frame, count in ours.most_common(25):
        out(f"  {100 * count / total:5.1f}%  {frame}")


async def profile(args: argparse.Namespace, spy: str, workdir: Path) -> None:
    side = TempoSide.start(args.config, workdir, in_memory=False)
    try:
        async with httpx.AsyncClient(base_url=side.url, timeout=60) as http:
            for _ in range(args.warmup):
                await http_run(http, "assistant")
            samples = workdir / "samples.txt"
            command = [spy, "record", "--format", "raw", "--rate", str(args.rate), "--gil", "--nonblocking"]
            sampler = subprocess.Popen(
                [*command, "-o", str(samples), "-p", str(side.process.pid)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            await asyncio.sleep(1.0)  # py-spy has attached
            left = args.runs

            async def client() -> None:
                nonlocal left
                while left > 0:
                    left -= 1
                    await http_run(http, "assistant")

            cpu_before, started = process_cpu_seconds(side.process.pid), time.perf_counter()
            await asyncio.gather(*(client() for _ in range(args.concurrency)))
            seconds = time.perf_counter() - started
            cpu_ms = (process_cpu_seconds(side.process.pid) - cpu_before) * 1000 / args.runs
            sampler.send_signal(signal.SIGINT)
            _, errors = sampler.communicate(timeout=60)
            if not samples.exists():
                raise SystemExit(f"py-spy wrote no samples: {errors.strip()[-500:]}")
    finally:
        side.stop()
    out(f"profile_run: config={args.config} {args.runs} runs by {args.concurrency} clients: "
        f"{args.runs / seconds:.1f} runs/s")  # fmt: skip
    if args.keep is not None:
        shutil.copyfile(samples, args.keep)
    report(samples, cpu_ms, args.runs, seconds, args.rate)


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--config", default="activities", choices=sorted(CONFIGS))
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rate", type=int, default=200, help="py-spy's samples a second")
    parser.add_argument("--keep", type=Path, help="also write py-spy's raw samples there (frame;frame;... count)")
    args = parser.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed: pip install -e '.[bench]' (or pip install py-spy)")
    load = os.getloadavg()[0]
    out(f"profile_run: load average {load:.2f} at start" + (busy_warning() if load > 0.5 else ""))
    with tempfile.TemporaryDirectory() as workdir:
        asyncio.run(profile(args, spy, Path(workdir)))
    return 0


if __name__ == "__main__":
    run_as_module("profile_run")
