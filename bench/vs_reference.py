"""tempo-agents over its HTTP API next to the reference server (in memory, not durable), in the same run.

    python bench/vs_reference.py [--runs 30] [--warmup 5] [--concurrency 20] [--load-runs 200] [--repeat 3]
                                 [--configs activities,local-tools] [--encryption] [--in-memory]
                                 [--reference-script PATH]

The reference server (``ref-server.mjs``: real Mastra packages, a scripted model, in memory) is started with node,
its packages installed once with npm into ``~/.cache/tempo-agents-bench/`` (``bench/_reference.py``). tempo-agents
runs as ``tempo-agents dev`` does, in one process (``bench/_tempo_side.py``: the embedded dev server, file-backed
unless ``--in-memory``, the worker, the HTTP API) serving ``bench/vs_reference_app.py``, once per configuration:

- ``activities``: every model step and tool call an activity (the defaults);
- ``local-tools``: the weather tool declares ``ActivityOptions(local=True)``;
- ``local-all``: the model steps too.

``--encryption`` adds, for each configuration, its twin with every payload sealed in Temporal (``<config>+sealed``:
the same process with ``TEMPO_AGENTS_ENCRYPTION_KEYS`` set), measured in the same round; the report ends with the
cost of encryption per configuration, off against on.

Both sides get the identical workload through the same route, ``POST /api/agents/assistant/stream`` with "What is
the weather in Oslo?" (the model calls the weather tool, then answers), read as SSE by an httpx client in this
process until ``data: [DONE]``:

- **sequential**: ``--runs`` runs one after the other (after ``--warmup``): request to first chunk and to done;
- **load**: ``--load-runs`` runs by ``--concurrency`` clients, each starting its next run when the last is done:
  runs/s, first chunk p95, done p50;
- **ten-step** and **three-parallel** runs (tempo-agents only: the reference's scripted model has no such
  script), sequential, against the bare floor.

The **bare floor** is a workflow of no-op activities in the run's shape (``bench/_bare.py``: two-step = model
step, tool call, model step), on the same dev server, its worker in this process, started as tempo-agents starts
runs (eagerly while fewer than ``EAGER_STARTS_IN_FLIGHT`` starts overlap), timed from ``start_workflow`` to its
result, sequential and under the same load.

**CPU per run** of each process, from ``/proc/<pid>/stat`` before and after each phase: the reference server;
tempo-agents' process (worker and API) and its Temporal server; for the floor, this process (its worker and
client) and the Temporal server. The machine's load average is printed: on a shared machine expect noise, and
quote medians over ``--repeat`` rounds (every round runs every side).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _reference
from bench._bare import BareRun, noop
from bench._common import bench_parser, median, out, process_cpu_seconds, quantile, run_as_module
from tempo_agents.client.app import EAGER_STARTS_IN_FLIGHT
from tempo_agents.worker.dev_server import free_port

PROMPT = "What is the weather in Oslo?"
EAGER_ACTIVITIES = ("--dynamic-config-value", "system.enableActivityEagerExecution=true")
SQLITE_WAL = ("--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal")
CONFIGS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "activities": ({}, ()),
    "local-tools": ({"BENCH_LOCAL_TOOLS": "1"}, ()),
    "local-all": ({"BENCH_LOCAL_TOOLS": "1", "BENCH_LOCAL_MODEL": "1"}, ()),
    "activities-eager": ({}, EAGER_ACTIVITIES),
    "local-tools-eager": ({"BENCH_LOCAL_TOOLS": "1"}, EAGER_ACTIVITIES),
    "activities-wal": ({}, SQLITE_WAL),
    "activities-wal-full": ({}, ("--sqlite-pragma", "journal_mode=wal")),
    "local-all-wal": ({"BENCH_LOCAL_TOOLS": "1", "BENCH_LOCAL_MODEL": "1"}, SQLITE_WAL),
}
"""Name: (environment of tempo-agents' process, extra dev server arguments)."""
SEALED = "+sealed"
"""The suffix of a configuration's twin whose payloads are encrypted (``--encryption``)."""
SEALED_ENVIRONMENT = {"TEMPO_AGENTS_ENCRYPTION_KEYS": f"bench:{base64.b64encode(os.urandom(32)).decode()}"}
SHAPES = {"two-step": [1, 1, 1], "ten-step": [1, 1] * 9 + [1], "three-parallel": [1, 3] * 3 + [1]}
AGENTS = {"two-step": "assistant", "ten-step": "ten-steps", "three-parallel": "three-parallel"}


@dataclass
class Phase:
    """One measured phase: latencies, throughput, CPU per run by process name."""

    runs: int = 0
    seconds: float = 0.0
    first: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.runs / self.seconds if self.seconds else float("nan")


@contextmanager
def measured(phase: Phase, pids: dict[str, int]) -> Iterator[None]:
    before = {name: process_cpu_seconds(pid) for name, pid in pids.items()}
    started = time.perf_counter()
    yield
    phase.seconds = time.perf_counter() - started
    for name, pid in pids.items():
        phase.cpu[name] = (process_cpu_seconds(pid) - before[name]) * 1000 / max(phase.runs, 1)


async def http_run(http: httpx.AsyncClient, agent: str) -> tuple[float, float]:
    """One run through ``POST /api/agents/{agent}/stream``: ms to the first chunk and to ``[DONE]``."""
    started = time.perf_counter()
    first = float("nan")
    async with http.stream("POST", f"/api/agents/{agent}/stream", json={"messages": PROMPT}) as answer:
        if answer.status_code != 200:
            raise SystemExit(f"{http.base_url} answered {answer.status_code}: {(await answer.aread())[:300]!r}")
        async for line in answer.aiter_lines():
            if line.startswith("data: {") and first != first:
                first = (time.perf_counter() - started) * 1000
            if line == "data: [DONE]":
                break
    return first, (time.perf_counter() - started) * 1000


Run = Callable[[], Awaitable[tuple[float, float]]]


def agent_run(http: httpx.AsyncClient, agent: str) -> Run:
    async def run() -> tuple[float, float]:
        return await http_run(http, agent)

    return run


async def sequential(run: Run, runs: int, warmup: int, pids: dict[str, int]) -> Phase:
    for _ in range(warmup):
        await run()
    phase = Phase(runs=runs)
    with measured(phase, pids):
        for _ in range(runs):
            first, done = await run()
            phase.first.append(first)
            phase.done.append(done)
    return phase


async def load(run: Run, runs: int, concurrency: int, pids: dict[str, int]) -> Phase:
    phase = Phase(runs=runs)
    left = runs

    async def client() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            first, done = await run()
            phase.first.append(first)
            phase.done.append(done)

    with measured(phase, pids):
        await asyncio.gather(*(client() for _ in range(concurrency)))
    return phase


def bare_run(client: Client, shape: list[int], task_queue: str) -> Run:
    """The floor's run, started as tempo-agents starts runs: eager while few starts are in flight."""
    in_flight = 0

    async def run() -> tuple[float, float]:
        nonlocal in_flight
        started = time.perf_counter()
        eager = in_flight < EAGER_STARTS_IN_FLIGHT
        in_flight += 1
        try:
            handle = await client.start_workflow(
                BareRun.run, shape, id=f"bare-{uuid.uuid4()}", task_queue=task_queue, request_eager_start=eager
            )
        finally:
            in_flight -= 1
        await handle.result()
        elapsed = (time.perf_counter() - started) * 1000
        return float("nan"), elapsed

    return run


@dataclass
class TempoSide:
    process: subprocess.Popen[str]
    url: str
    address: str
    server_pid: int

    @classmethod
    def start(cls, config: str, workdir: Path, in_memory: bool) -> TempoSide:
        port, api_port = free_port(), free_port()
        db_file = "" if in_memory else str(workdir / f"{config}-temporal.db")
        command = [
            sys.executable, "-m", "bench._tempo_side", "--app", "bench.vs_reference_app:app",
            "--store", f"sqlite:///{workdir / f'{config}-store.db'}", "--db-file", db_file,
            "--port", str(port), "--api-port", str(api_port),
        ]  # fmt: skip
        environment, server_args = CONFIGS[config.removesuffix(SEALED)]
        if config.endswith(SEALED):
            environment = {**environment, **SEALED_ENVIRONMENT}
        command += [f"--server-arg={arg}" for arg in server_args]
        env = {**os.environ, **environment}
        root = Path(__file__).resolve().parent.parent
        process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("ready"):
            raise SystemExit(f"tempo-agents side ({config}) did not start: {line!r}")
        server_pid = int(line.split("server-pid=")[1])
        return cls(process, f"http://127.0.0.1:{api_port}", f"127.0.0.1:{port}", server_pid)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


@dataclass
class Round:
    reference: dict[str, Phase] = field(default_factory=dict)
    tempo: dict[str, dict[str, Phase]] = field(default_factory=dict)
    bare: dict[str, Phase] = field(default_factory=dict)


async def one_round(args: argparse.Namespace, script: Path, workdir: Path) -> Round:
    result = Round()
    timeout = httpx.Timeout(120)
    limits = httpx.Limits(max_connections=args.concurrency + 5, max_keepalive_connections=args.concurrency + 5)

    port = free_port()
    reference = _reference.start(script, port)
    try:
        pids = {"reference": reference.pid}
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=timeout, limits=limits) as http:
            run = agent_run(http, "assistant")
            result.reference["sequential"] = await sequential(run, args.runs, args.warmup, pids)
            result.reference["load"] = await load(run, args.load_runs, args.concurrency, pids)
    finally:
        reference.terminate()
        reference.wait(timeout=30)

    for n, config in enumerate(args.configs):
        side = TempoSide.start(config, workdir, args.in_memory)
        try:
            pids = {"tempo-agents": side.process.pid, "temporal": side.server_pid}
            phases: dict[str, Phase] = {}
            async with httpx.AsyncClient(base_url=side.url, timeout=timeout, limits=limits) as http:
                run = agent_run(http, "assistant")
                phases["sequential"] = await sequential(run, args.runs, args.warmup, pids)
                phases["load"] = await load(run, args.load_runs, args.concurrency, pids)
                for shape in ("ten-step", "three-parallel"):
                    phases[shape] = await sequential(agent_run(http, AGENTS[shape]), args.shape_runs, 2, pids)
            result.tempo[config] = phases
            if n == 0:
                result.bare = await bare_floor(args, side)
        finally:
            side.stop()
    return result


async def bare_floor(args: argparse.Namespace, side: TempoSide) -> dict[str, Phase]:
    client = await Client.connect(side.address)
    task_queue = f"bench-bare-{uuid.uuid4()}"
    pids = {"bench (worker, client)": os.getpid(), "temporal": side.server_pid}
    phases: dict[str, Phase] = {}
    async with Worker(client, task_queue=task_queue, workflows=[BareRun], activities=[noop]):
        phases["sequential"] = await sequential(
            bare_run(client, SHAPES["two-step"], task_queue), args.runs, args.warmup, pids
        )
        phases["load"] = await load(
            bare_run(client, SHAPES["two-step"], task_queue), args.load_runs, args.concurrency, pids
        )
        for shape in ("ten-step", "three-parallel"):
            phases[shape] = await sequential(bare_run(client, SHAPES[shape], task_queue), args.shape_runs, 2, pids)
    return phases


# Output ---------------------------------------------------------------------------------------


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ms(value: float) -> str:
    return "-" if value != value else f"{value:,.0f}"


def cpu_text(cpu: dict[str, float]) -> str:
    return ", ".join(f"{name} {value:.1f}" for name, value in cpu.items())


def report(rounds: list[Round], args: argparse.Namespace) -> None:
    def across(pick: Callable[[Round], float]) -> float:
        return med([pick(r) for r in rounds])

    def phase_cpu(pick: Callable[[Round], Phase]) -> dict[str, float]:
        return {name: med([pick(r).cpu[name] for r in rounds]) for name in pick(rounds[0]).cpu}

    out()
    out(f"medians over {len(rounds)} round(s); ms unless said; CPU in ms of CPU time per run")
    ref_seq = across(lambda r: median(r.reference["sequential"].done))
    ref_rate = across(lambda r: r.reference["load"].rate)
    out(
        f"reference   sequential done p50 {ms(ref_seq)}, first chunk p50 "
        f"{ms(across(lambda r: median(r.reference['sequential'].first)))}; load {ref_rate:.1f} runs/s, "
        f"first chunk p95 {ms(across(lambda r: quantile(r.reference['load'].first, 0.95)))}, done p50 "
        f"{ms(across(lambda r: median(r.reference['load'].done)))}"
    )
    out(f"            CPU/run sequential: {cpu_text(phase_cpu(lambda r: r.reference['sequential']))}")
    out(f"            CPU/run load:       {cpu_text(phase_cpu(lambda r: r.reference['load']))}")
    bare_seq = across(lambda r: median(r.bare["sequential"].done))
    bare_rate = across(lambda r: r.bare["load"].rate)
    out(
        f"bare floor  sequential done p50 {ms(bare_seq)}; load {bare_rate:.1f} runs/s, done p50 "
        f"{ms(across(lambda r: median(r.bare['load'].done)))}; ten-step p50 "
        f"{ms(across(lambda r: median(r.bare['ten-step'].done)))}; three-parallel p50 "
        f"{ms(across(lambda r: median(r.bare['three-parallel'].done)))}"
    )
    out(f"            CPU/run sequential: {cpu_text(phase_cpu(lambda r: r.bare['sequential']))}")
    out(f"            CPU/run load:       {cpu_text(phase_cpu(lambda r: r.bare['load']))}")
    out()
    header = (
        "config        seq done p50   (x ref, x bare)  seq first p50  load runs/s (x ref, x bare)  "
        "load first p95  load done p50  ten-step p50 (x bare)  3-parallel p50 (x bare)"
    )
    out(header)
    quotable = []
    for config in args.configs:

        def pick(name: str, config: str = config) -> Callable[[Round], Phase]:
            return lambda r: r.tempo[config][name]

        seq = across(lambda r: median(pick("sequential")(r).done))
        rate = across(lambda r: pick("load")(r).rate)
        first95 = across(lambda r: quantile(pick("load")(r).first, 0.95))
        ten = across(lambda r: median(pick("ten-step")(r).done))
        par = across(lambda r: median(pick("three-parallel")(r).done))
        bare_ten = across(lambda r: median(r.bare["ten-step"].done))
        bare_par = across(lambda r: median(r.bare["three-parallel"].done))
        out(
            f"{config:<13} {ms(seq):>12}   ({seq / ref_seq:.2f}x, {seq / bare_seq:.2f}x)  "
            f"{ms(across(lambda r: median(pick('sequential')(r).first))):>13}  "
            f"{rate:>11.1f} ({rate / ref_rate:.2f}x, {rate / bare_rate:.2f}x)  {ms(first95):>14}  "
            f"{ms(across(lambda r: median(pick('load')(r).done))):>13}  {ms(ten):>12} ({ten / bare_ten:.2f}x)  "
            f"{ms(par):>14} ({par / bare_par:.2f}x)"
        )
        out(f"{'':<13} CPU/run sequential: {cpu_text(phase_cpu(pick('sequential')))}")
        out(f"{'':<13} CPU/run load:       {cpu_text(phase_cpu(pick('load')))}")
        quotable.append(
            f"{config}: seq {seq / ref_seq:.2f}x ref, load {rate / ref_rate:.2f}x ref, first p95 {ms(first95)}ms"
        )
    out()
    out("vs_reference: " + "; ".join(quotable))
    for config in args.configs:
        if config.endswith(SEALED):
            report_encryption(rounds, config.removesuffix(SEALED))


def report_encryption(rounds: list[Round], config: str) -> None:
    """The cost of encryption for ``config``: sequential done p50 and runs/s under load, off against on."""

    def both(pick: Callable[[dict[str, Phase]], float]) -> tuple[float, float]:
        off = median([pick(r.tempo[config]) for r in rounds])
        return off, median([pick(r.tempo[config + SEALED]) for r in rounds])

    seq_off, seq_on = both(lambda phases: median(phases["sequential"].done))
    rate_off, rate_on = both(lambda phases: phases["load"].rate)
    out(
        f"vs_reference encryption {config}: seq done p50 off={ms(seq_off)}ms on={ms(seq_on)}ms "
        f"cost={(seq_on / seq_off - 1) * 100:+.1f}%; load off={rate_off:.1f} on={rate_on:.1f} runs/s "
        f"cost={(1 - rate_on / rate_off) * 100:+.1f}%"
    )


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--shape-runs", type=int, default=10, help="runs of the ten-step and three-parallel shapes")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--load-runs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--configs", default="activities,local-tools", help=f"of {', '.join(CONFIGS)}")
    parser.add_argument("--in-memory", action="store_true", help="tempo-agents' dev server keeps no file")
    parser.add_argument(
        "--encryption", action="store_true", help="also run each config with its payloads encrypted, and compare"
    )
    parser.add_argument("--reference-script", type=Path, default=_reference.DEFAULT_SOURCE)
    args = parser.parse_args()
    args.configs = [c for c in args.configs.split(",") if c]
    unknown = set(args.configs) - set(CONFIGS)
    if unknown:
        parser.error(f"unknown config(s) {', '.join(sorted(unknown))}")
    if args.encryption:
        args.configs = [name for config in args.configs for name in (config, config + SEALED)]
    script = _reference.install(args.reference_script)
    out(f"load average at start: {loadavg()} ({os.cpu_count()} CPUs)")
    server = "in memory" if args.in_memory else "file-backed"
    out(f"tempo-agents: embedded dev server {server}, SQLite store; configs: {', '.join(args.configs)}")
    rounds = []
    with tempfile.TemporaryDirectory(prefix="bench-vs-reference-") as tmp:
        for n in range(args.repeat):
            workdir = Path(tmp) / f"round-{n}"
            workdir.mkdir()
            started = time.perf_counter()
            rounds.append(asyncio.run(one_round(args, script, workdir)))
            out(f"round {n + 1}/{args.repeat} done in {time.perf_counter() - started:.0f} s (load {loadavg()})")
    report(rounds, args)
    out(f"load average at end: {loadavg()}")
    return 0


if __name__ == "__main__":
    run_as_module("vs_reference")
