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
step, tool call, model step), on the first configuration's dev server, its worker in this process, started as
tempo-agents starts runs (eagerly while fewer than ``EAGER_STARTS_IN_FLIGHT`` starts overlap), timed from
``start_workflow`` to its result, sequential and under the same load. The first configuration and the floor take
each phase in ``TURNS`` turns, in an order that alternates from round to round, so that neither meets the server's
database fuller than the other. With a ``local-all`` configuration, the **bare local floor** (the same workflow,
its activities local) is measured too, for the CPU its process (the SDK alone) takes against the reference's.

**CPU per run** of each process, from ``/proc/<pid>/stat`` before and after each phase (and ``SETTLE_SECONDS``
after its last run, so that what follows a run's answer counts for its side): the reference server;
tempo-agents' process (worker and API) and its Temporal server; for the floor, this process (its worker and
client) and the Temporal server. The machine's load average is printed: on a shared machine expect noise, and
quote medians over ``--repeat`` rounds (every round runs every side).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import functools
import operator
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
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


SETTLE_SECONDS = 0.3
"""How long a phase's CPU window stays open after its last run (not in its time): the work that follows a run's
answer (its workflow's completion) counts for its own side when the sides take turns."""


@asynccontextmanager
async def measured(phase: Phase, pids: dict[str, int]) -> AsyncIterator[None]:
    before = {name: process_cpu_seconds(pid) for name, pid in pids.items()}
    started = time.perf_counter()
    yield
    phase.seconds = time.perf_counter() - started
    await asyncio.sleep(SETTLE_SECONDS)
    for name, pid in pids.items():
        phase.cpu[name] = (process_cpu_seconds(pid) - before[name]) * 1000 / max(phase.runs, 1)


def joined(parts: list[Phase]) -> Phase:
    """One phase of several measured in turns: their runs, times and latencies together, CPU per run over all."""
    runs = sum(part.runs for part in parts)
    cpu = {name: sum(part.cpu[name] * part.runs for part in parts) / max(runs, 1) for name in parts[0].cpu}
    first = [value for part in parts for value in part.first]
    done = [value for part in parts for value in part.done]
    return Phase(runs=runs, seconds=sum(part.seconds for part in parts), first=first, done=done, cpu=cpu)


async def in_turns(
    sides: dict[str, Callable[[int], Awaitable[Phase]]], runs: int, turns: int, first: int
) -> dict[str, Phase]:
    """Each side's phase of ``runs`` runs, measured in ``turns`` parts that alternate between the sides (starting
    with side number ``first``): sides sharing one Temporal server see it alike (its database grows with every run,
    and its CPU per run with it), not one of them on a fresh server and the other on a fuller one."""
    names = list(sides)
    order = names[first % len(names) :] + names[: first % len(names)]
    parts: dict[str, list[Phase]] = {name: [] for name in names}
    for turn in range(turns):
        share = runs // turns + (1 if turn < runs % turns else 0)
        for name in order:
            parts[name].append(await sides[name](share))
    return {name: joined(parts[name]) for name in names}


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


def shaped_run(http: httpx.AsyncClient, shape: str) -> Run:
    """A run of the shape's agent (``AGENTS``) through the HTTP API."""
    return agent_run(http, AGENTS[shape])


def agent_run(http: httpx.AsyncClient, agent: str) -> Run:
    async def run() -> tuple[float, float]:
        return await http_run(http, agent)

    return run


async def sequential(run: Run, runs: int, warmup: int, pids: dict[str, int]) -> Phase:
    for _ in range(warmup):
        await run()
    phase = Phase(runs=runs)
    async with measured(phase, pids):
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

    async with measured(phase, pids):
        await asyncio.gather(*(client() for _ in range(concurrency)))
    return phase


def bare_run(client: Client, shape: list[int], task_queue: str, *, local: bool = False) -> Run:
    """The floor's run, started as tempo-agents starts runs: eager while few starts are in flight; ``local``: its
    activities local ones (the local configuration's floor)."""
    in_flight = 0

    async def run() -> tuple[float, float]:
        nonlocal in_flight
        started = time.perf_counter()
        eager = in_flight < EAGER_STARTS_IN_FLIGHT
        in_flight += 1
        try:
            handle = await client.start_workflow(
                BareRun.run,
                args=[shape, local],
                id=f"bare-{uuid.uuid4()}",
                task_queue=task_queue,
                request_eager_start=eager,
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


async def one_round(args: argparse.Namespace, script: Path, workdir: Path, number: int) -> Round:
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
            async with httpx.AsyncClient(base_url=side.url, timeout=timeout, limits=limits) as http:
                ours = Side(functools.partial(shaped_run, http), pids)
                if n == 0:
                    result.tempo[config], result.bare = await beside_the_floor(args, side, ours, number)
                else:
                    result.tempo[config] = await phases_of(args, ours)
        finally:
            side.stop()
    return result


@dataclass
class Side:
    """What one side runs, by shape, and the processes whose CPU is its."""

    run: Callable[[str], Run]
    pids: dict[str, int]

    def sequential(self, shape: str) -> Callable[[int], Awaitable[Phase]]:
        return lambda runs: sequential(self.run(shape), runs, 0, self.pids)

    def load(self, concurrency: int) -> Callable[[int], Awaitable[Phase]]:
        return lambda runs: load(self.run("two-step"), runs, concurrency, self.pids)

    async def warm_up(self, runs: int) -> None:
        for shape in SHAPES:
            for _ in range(runs if shape == "two-step" else 2):
                await self.run(shape)()


async def phases_of(args: argparse.Namespace, side: Side) -> dict[str, Phase]:
    """A side's phases on a server of its own."""
    await side.warm_up(args.warmup)
    phases = {
        "sequential": await side.sequential("two-step")(args.runs),
        "load": await side.load(args.concurrency)(args.load_runs),
    }
    for shape in ("ten-step", "three-parallel"):
        phases[shape] = await side.sequential(shape)(args.shape_runs)
    return phases


async def beside_the_floor(
    args: argparse.Namespace, side: TempoSide, ours: Side, number: int
) -> tuple[dict[str, Phase], dict[str, Phase]]:
    """The first configuration's phases and the bare floor's, on the same Temporal server, taking turns (``in_turns``;
    the round's number says which side goes first)."""
    client = await Client.connect(side.address)
    task_queue = f"bench-bare-{uuid.uuid4()}"
    floor = Side(
        lambda shape: bare_run(client, SHAPES[shape], task_queue),
        {"bench (worker, client)": os.getpid(), "temporal": side.server_pid},
    )
    async with Worker(client, task_queue=task_queue, workflows=[BareRun], activities=[noop]):
        await ours.warm_up(args.warmup)
        await floor.warm_up(args.warmup)
        phases: dict[str, dict[str, Phase]] = {"ours": {}, "floor": {}}

        async def together(name: str, pick: Callable[[Side], Callable[[int], Awaitable[Phase]]], runs: int) -> None:
            measured = await in_turns({"ours": pick(ours), "floor": pick(floor)}, runs, TURNS, number)
            for who, phase in measured.items():
                phases[who][name] = phase

        await together("sequential", lambda s: s.sequential("two-step"), args.runs)
        await together("load", lambda s: s.load(args.concurrency), args.load_runs)
        for shape in ("ten-step", "three-parallel"):
            await together(shape, operator.methodcaller("sequential", shape), args.shape_runs)
        if any(is_local(config) for config in args.configs):
            local = bare_run(client, SHAPES["two-step"], task_queue, local=True)
            phases["floor"]["local-sequential"] = await sequential(local, args.runs, args.warmup, floor.pids)
            phases["floor"]["local-load"] = await load(local, args.load_runs, args.concurrency, floor.pids)
    return phases["ours"], phases["floor"]


TURNS = 3
"""How many parts of each phase the first configuration and the floor take in turns."""


def is_local(config: str) -> bool:
    """Whether the configuration's model steps and tools are all local activities (its floor: ``BareRun``'s
    ``local``)."""
    return CONFIGS[config.removesuffix(SEALED)][0].get("BENCH_LOCAL_MODEL") == "1"


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
    if "local-sequential" in rounds[0].bare:
        out(
            f"bare local  sequential done p50 {ms(across(lambda r: median(r.bare['local-sequential'].done)))}; load "
            f"{across(lambda r: r.bare['local-load'].rate):.1f} runs/s (the same floor, its activities local)"
        )
        out(f"            CPU/run sequential: {cpu_text(phase_cpu(lambda r: r.bare['local-sequential']))}")
        out(f"            CPU/run load:       {cpu_text(phase_cpu(lambda r: r.bare['local-load']))}")
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
        if is_local(config):
            out(f"{'':<13} {process_cpu_ratios(rounds, config)}")
        quotable.append(
            f"{config}: seq {seq / ref_seq:.2f}x ref, load {rate / ref_rate:.2f}x ref, first p95 {ms(first95)}ms"
        )
    out()
    out("vs_reference: " + "; ".join(quotable))
    for config in args.configs:
        if config.endswith(SEALED):
            report_encryption(rounds, config.removesuffix(SEALED))


def process_cpu_ratios(rounds: list[Round], config: str) -> str:
    """A local configuration's process CPU per run against the reference server's, and the bare local floor's
    process (the SDK's worker and client alone, for the same shape) against the reference's too."""
    parts = []
    for phase in ("sequential", "load"):
        ours = median([r.tempo[config][phase].cpu["tempo-agents"] for r in rounds])
        reference = median([r.reference[phase].cpu["reference"] for r in rounds])
        bare = median([r.bare[f"local-{phase}"].cpu["bench (worker, client)"] for r in rounds])
        parts.append(
            f"{phase}: {ours / reference:.2f}x the reference's process (bare local floor's {bare / reference:.2f}x)"
        )
    return "process CPU/run " + "; ".join(parts)


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
            rounds.append(asyncio.run(one_round(args, script, workdir, n)))
            out(f"round {n + 1}/{args.repeat} done in {time.perf_counter() - started:.0f} s (load {loadavg()})")
    report(rounds, args)
    out(f"load average at end: {loadavg()}")
    return 0


if __name__ == "__main__":
    run_as_module("vs_reference")
