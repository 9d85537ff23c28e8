"""Many runs suspended at once, then resumed: throughput, latency and memory against a bare-Temporal baseline.

    python bench/suspend_resume.py [--runs 1000] [--concurrency 50] [--warmup 5] [--serial 20] [--db-file PATH]
                                   [--stock-server] [--baseline-first]

tempo-agents side: an agent on a ``ScriptedModel`` whose step 0 calls a tool that suspends
(``await ctx.suspend(...)``) and whose step 1 answers. ``--runs`` runs are started with at most
``--concurrency`` between start and suspended (``app.stream`` + ``stream.result()`` returning ``suspended``);
then every run is resumed (``resume_generate``), as many at once. Baseline: a bare workflow that executes
one no-op activity, waits on a signal (``wait_condition``), executes one no-op activity and returns; started,
seen waiting (its first activity done), signalled and awaited the same way. Fair baseline: the work a
tempo-agents run does, written by hand as a Temporal workflow: a model-step activity, a tool activity,
wait for an update that answers, a tool activity, a model-step activity. Each side has its own worker
in this process, one after the other, against one embedded dev server; ``--serial`` runs one at a time come
first (latency without queueing). See bench/README.md for every figure.

The last line is quotable::

    suspend_resume: N=1000 suspend tempo=XX/s fair=YY/s (0.NNx) resume tempo=.. fair=.. (..x)
    latency p50 tempo=..ms fair=..ms (..x) p95 tempo=..ms fair=..ms (..x) bare: suspend (..x) resume (..x)
    worker RSS waiting tempo=..MB (+..) fair=..MB (+..)

(on one line).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import ctypes.util
import gc
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Client,
    Interceptor,
    OutboundInterceptor,
    StartWorkflowUpdateInput,
    WorkflowUpdateHandle,
)
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `bench`, from any directory

from bench._common import (
    SERVER_ARGS,
    add_dev_server_arguments,
    bench_parser,
    busy_warning,
    out,
    quantile,
    run_as_module,
    start_server,
)
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.store.base import ChunkWrite, JournalEntry, StartFence
from tempo_agents.store.sqlite import SQLiteStore
from tempo_agents.worker.plugin import PASSTHROUGH_MODULES
from tempo_agents.workflows import search_attributes

AGENT_ID = "bench-suspend"
TEMPO = "tempo-agents"
BASELINE = "baseline"
FAIR = "fair"
"""The same work as a tempo-agents run, written by hand: two activities, wait for an update, two activities."""
PHASE_TIMEOUT = 900.0
"""Seconds one phase (all suspends, or all resumes) may take before the bench gives up."""

ACTIVITY_TIMEOUT = timedelta(minutes=1)


# Baseline: a bare workflow that waits on a signal between two no-op activities --------------------


class BaselineInput(BaseModel):
    run_id: str
    question: str
    before: int = 1
    """No-op activities before the wait (the last one tells the bench the run is about to wait)."""
    after: int = 1
    """No-op activities after the wait."""


class BaselineStep(BaseModel):
    run_id: str
    phase: str


class BaselineStepResult(BaseModel):
    phase: str


class BaselineAnswer(BaseModel):
    ok: bool


class BaselineResult(BaseModel):
    run_id: str
    ok: bool


_waiting: dict[str, asyncio.Future[float]] = {}
"""Baseline runs whose first activity has not finished yet, by workflow id (the worker runs in this process)."""


@activity.defn(name="bench.before_wait")
async def before_wait(step: BaselineStep) -> BaselineStepResult:
    """No-op; tells the bench (in this process) that the run is about to wait, as the finish chunk does."""
    future = _waiting.get(activity.info().workflow_id or "")
    if future is not None and not future.done():
        future.set_result(time.perf_counter())
    return BaselineStepResult(phase=step.phase)


@activity.defn(name="bench.after_wait")
async def after_wait(step: BaselineStep) -> BaselineStepResult:
    return BaselineStepResult(phase=step.phase)


@workflow.defn(name="SuspendResumeBaseline")
class BaselineWorkflow:
    @workflow.init
    def __init__(self, run_input: BaselineInput) -> None:
        self._answer: BaselineAnswer | None = None
        self._status = "running"

    @workflow.signal(name="resume")
    def resume(self, answer: BaselineAnswer) -> None:
        self._answer = answer

    @workflow.update(name="answer")
    def answer(self, answer: BaselineAnswer) -> bool:
        """The acknowledged answer (what the fair baseline's client sends)."""
        self._answer = answer
        return True

    @workflow.query(name="status")
    def status(self) -> str:
        return self._status

    @workflow.run
    async def run(self, run_input: BaselineInput) -> BaselineResult:
        for i in range(run_input.before):
            last = i == run_input.before - 1
            await workflow.execute_activity(
                before_wait if last else after_wait,
                BaselineStep(run_id=run_input.run_id, phase="before"),
                start_to_close_timeout=ACTIVITY_TIMEOUT,
            )
        self._status = "waiting"
        await workflow.wait_condition(lambda: self._answer is not None)
        self._status = "running"
        for _ in range(run_input.after):
            await workflow.execute_activity(
                after_wait,
                BaselineStep(run_id=run_input.run_id, phase="after"),
                start_to_close_timeout=ACTIVITY_TIMEOUT,
            )
        assert self._answer is not None
        return BaselineResult(run_id=run_input.run_id, ok=self._answer.ok)


def baseline_worker(client: Client, task_queue: str) -> Worker:
    """The baseline's own worker; this module is passed through the sandbox (as tempo_agents is)."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES, "bench")
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[BaselineWorkflow],
        activities=[before_wait, after_wait],
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
    )


# tempo-agents side -------------------------------------------------------------------------------


async def _ask(data: dict[str, Any], ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"question": "ok?"})
    return {"answer": ctx.resume_data}


def _script(request: ModelRequest) -> ScriptedResponse:
    if request.step == 0:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("ask", {})])
    return ScriptedResponse(text="Thanks.")


class CountingStore(SQLiteStore):
    """The SQLite store, counting journal reads (every tailing client reads after every wake-up)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.reads = 0
        self.appends = 0

    async def read_chunks(self, run_id: str, offset: int = 0, limit: int = 1000) -> list[JournalEntry]:
        self.reads += 1
        return await super().read_chunks(run_id, offset, limit)

    async def append_chunks(
        self, run_id: str, writes: Sequence[ChunkWrite], fence: StartFence | None = None
    ) -> list[int]:
        self.appends += 1
        return await super().append_chunks(run_id, writes, fence)


def build_app(store: CountingStore, task_queue: str, client: Client) -> App:
    ask = create_tool(id="ask", description="Asks a person and waits for the answer.", execute=_ask)
    agent = Agent(id=AGENT_ID, instructions="Ask, then thank.", model=ScriptedModel(_script), tools={"ask": ask})
    return App(agents=[agent], store=store, task_queue=task_queue, client=client)


class UpdateClock(Interceptor):
    """A client interceptor noting when each workflow's update is sent (tempo-agents' resume is an update)."""

    def __init__(self) -> None:
        self.sent: dict[str, float] = {}

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _UpdateClockOutbound(next, self.sent)


class _UpdateClockOutbound(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, sent: dict[str, float]) -> None:
        super().__init__(next)
        self._sent = sent

    async def start_workflow_update(self, input: StartWorkflowUpdateInput) -> WorkflowUpdateHandle[Any]:
        self._sent[input.id] = time.perf_counter()
        return await super().start_workflow_update(input)


# Measurements ------------------------------------------------------------------------------------


@dataclass
class Memory:
    worker_kb: int
    server_kb: int | None


@dataclass
class Cpu:
    """CPU seconds used during a phase by this process (worker, client, SQLite thread) and by the dev server."""

    worker_s: float
    server_s: float | None


@dataclass
class Latencies:
    """Per-run figures of one series of runs, in milliseconds."""

    to_waiting: list[float] = field(default_factory=list)
    """Start call to seen waiting (finish chunk ``suspended`` / first activity done)."""
    resume: list[float] = field(default_factory=list)
    """Update (tempo-agents, fair baseline) or signal (bare baseline) sent, to the result."""
    call: list[float] = field(default_factory=list)
    """The client's resume call to the result (tempo-agents: ``resume_generate`` = the update + tail;
    baselines: signal or update + ``handle.result()``)."""


@dataclass(frozen=True)
class HistoryShape:
    """One run's history, suspended and resumed to its end."""

    events: int
    proto_bytes: int
    activities: int
    local_activities: int
    workflow_tasks: int
    activity_types: tuple[str, ...]


async def history_shape(client: Client, run_id: str) -> HistoryShape:
    handle = client.get_workflow_handle(run_id)
    await handle.result()
    events = list((await handle.fetch_history()).events)
    kinds = [event.event_type for event in events]
    local = sum(
        1
        for event in events
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and event.marker_recorded_event_attributes.marker_name == "core_local_activity"
    )
    names = tuple(
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    )
    return HistoryShape(
        events=len(events),
        proto_bytes=sum(event.ByteSize() for event in events),
        activities=len(names),
        local_activities=local,
        workflow_tasks=kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
        activity_types=names,
    )


@dataclass
class SideResult:
    side: str
    runs: int
    suspend_s: float = 0.0
    """First start to last run seen waiting."""
    resume_s: float = 0.0
    """First resume sent to last result received."""
    loaded: Latencies = field(default_factory=Latencies)
    """The ``runs`` runs, ``concurrency`` at a time."""
    serial: Latencies = field(default_factory=Latencies)
    """``--serial`` runs, one at a time (after the warm-up): latency without queueing."""
    suspend_cpu: Cpu | None = None
    resume_cpu: Cpu | None = None
    before: Memory | None = None
    waiting: Memory | None = None
    after: Memory | None = None
    reads_per_run: float | None = None
    appends_per_run: float | None = None
    shape: HistoryShape | None = None

    @property
    def suspend_rate(self) -> float:
        return self.runs / self.suspend_s

    @property
    def resume_rate(self) -> float:
        return self.runs / self.resume_s


def _status_kb(path: str, key: str = "VmRSS") -> int | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def server_pid() -> int | None:
    """The dev server: the child process of this one running the ``temporal`` binary."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if fields[1] == me and os.path.basename(command.decode(errors="replace")) == "temporal":
            return int(entry.name)
    return None


_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
_TICKS = os.sysconf("SC_CLK_TCK")


def memory(pid: int | None) -> Memory:
    """RSS of this process (worker and client) after a full collection, and of the dev server."""
    gc.collect()
    trim = getattr(_libc, "malloc_trim", None)
    if trim is not None:  # give freed heap back, so a figure is what is live, not what was once used
        trim(0)
    worker = _status_kb("/proc/self/status") or 0
    return Memory(worker, _status_kb(f"/proc/{pid}/status") if pid is not None else None)


def cpu_now(pid: int | None) -> Cpu:
    server = None
    if pid is not None:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            server = (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime
        except (OSError, IndexError, ValueError):
            server = None
    return Cpu(time.process_time(), server)


def cpu_since(before: Cpu, pid: int | None) -> Cpu:
    after = cpu_now(pid)
    server = None if after.server_s is None or before.server_s is None else after.server_s - before.server_s
    return Cpu(after.worker_s - before.worker_s, server)


async def _bounded(count: int, concurrency: int, one: Callable[[int], Awaitable[None]]) -> None:
    """``one(i)`` for every i, at most ``concurrency`` at a time; fails fast on the first error."""
    semaphore = asyncio.Semaphore(concurrency)

    async def guarded(i: int) -> None:
        async with semaphore:
            await one(i)

    tasks = [asyncio.create_task(guarded(i)) for i in range(count)]
    try:
        done, pending = await asyncio.wait(tasks, timeout=PHASE_TIMEOUT, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            task.result()
        if pending:
            raise RuntimeError(f"{len(pending)} of {count} runs did not get through within {PHASE_TIMEOUT:.0f} s")
    finally:
        for task in tasks:
            task.cancel()


async def _settle(count: Callable[[], Awaitable[int]], want: int, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while (seen := await count()) != want:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: {seen} of {want} after {timeout:.0f} s")
        await asyncio.sleep(0.2)


async def _count(client: Client, query: str) -> int:
    return (await client.count_workflows(query)).count


@dataclass(frozen=True)
class Options:
    runs: int
    concurrency: int
    warmup: int
    serial: int
    pid: int | None


Step = Callable[[str, "Latencies | None"], Awaitable[None]]


@dataclass(frozen=True)
class Side:
    """How one side starts a run and waits until it waits, and resumes a run and waits for its result."""

    suspend: Step
    resume: Step
    begin: Callable[[], None] = lambda: None
    """Called just before the ``runs`` runs start."""
    suspended: Callable[[], Awaitable[None]] | None = None
    """Called once every run was seen waiting (returns when the server agrees)."""


async def measure(result: SideResult, options: Options, client: Client, prefix: str, side: Side) -> None:
    """Warm-up and one-at-a-time runs, then ``runs`` runs suspended, measured while waiting, and resumed."""
    for i in range(options.warmup + options.serial):
        series = result.serial if i >= options.warmup else None
        await side.suspend(f"{prefix}-s{i}", series)
        await side.resume(f"{prefix}-s{i}", series)
    if options.warmup + options.serial:
        result.shape = await history_shape(client, f"{prefix}-s{options.warmup + options.serial - 1}")
    pid = options.pid
    result.before = memory(pid)
    side.begin()
    cpu = cpu_now(pid)
    start = time.perf_counter()
    await _bounded(options.runs, options.concurrency, lambda i: side.suspend(f"{prefix}-{i}", result.loaded))
    result.suspend_s = time.perf_counter() - start
    result.suspend_cpu = cpu_since(cpu, pid)
    if side.suspended is not None:
        await side.suspended()
    await asyncio.sleep(1.0)  # the workflow tasks after each run's last activity complete: every run now waits
    result.waiting = memory(pid)
    cpu = cpu_now(pid)
    start = time.perf_counter()
    await _bounded(options.runs, options.concurrency, lambda i: side.resume(f"{prefix}-{i}", result.loaded))
    result.resume_s = time.perf_counter() - start
    result.resume_cpu = cpu_since(cpu, pid)


async def run_tempo_side(env: WorkflowEnvironment, tmp: Path, options: Options) -> SideResult:
    clock = UpdateClock()
    config = env.client.config()
    config["interceptors"] = [clock]
    client = Client(**config)
    store = CountingStore(tmp / "store.db")
    task_queue = f"bench-suspend-{uuid.uuid4()}"
    app = build_app(store, task_queue, client)
    agent = app.agent(AGENT_ID)
    result = SideResult(TEMPO, options.runs)

    async def suspend(run_id: str, series: Latencies | None) -> None:
        start = time.perf_counter()
        stream = await app.stream(AGENT_ID, "Go.", run_id=run_id)
        first = await stream.result()
        if first.finish_reason != "suspended":
            raise RuntimeError(f"{run_id}: expected a suspended run, got {first.finish_reason} ({first.error})")
        if series is not None:
            series.to_waiting.append((time.perf_counter() - start) * 1000)

    async def resume(run_id: str, series: Latencies | None) -> None:
        start = time.perf_counter()
        done = await agent.resume_generate({"ok": True}, run_id=run_id)
        end = time.perf_counter()
        if done.finish_reason != "stop" or done.text != "Thanks.":
            raise RuntimeError(f"{run_id}: expected a finished run, got {done.finish_reason} ({done.error})")
        if series is not None:
            series.resume.append((end - clock.sent[run_id]) * 1000)
            series.call.append((end - start) * 1000)

    listed = (
        f"WorkflowType = 'AgentRunWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '{task_queue}' "
        f"AND {search_attributes.STATUS.name} = 'suspended'"
    )

    counts = [0, 0]

    def begin() -> None:
        counts[:] = [store.reads, store.appends]

    async def suspended() -> None:
        result.reads_per_run = (store.reads - counts[0]) / options.runs
        result.appends_per_run = (store.appends - counts[1]) / options.runs
        await _settle(lambda: _count(client, listed), options.runs, "runs listed as suspended")

    async with app.worker():
        await measure(result, options, client, f"sr-{uuid.uuid4().hex[:8]}", Side(suspend, resume, begin, suspended))
        running = f"ExecutionStatus = 'Running' AND TaskQueue = '{task_queue}'"
        await _settle(lambda: _count(client, running), 0, "runs still open after their finish chunk")
    await store.close()
    result.after = memory(options.pid)
    return result


async def run_baseline_side(env: WorkflowEnvironment, options: Options, *, fair: bool = False) -> SideResult:
    """The bare baseline (one activity, a signal, one activity), or the fair one (two activities, an update
    that answers, two activities)."""
    client = env.client
    task_queue = f"bench-baseline-{uuid.uuid4()}"
    result = SideResult(FAIR if fair else BASELINE, options.runs)
    counts = {"before": 2, "after": 2} if fair else {"before": 1, "after": 1}

    async def suspend(run_id: str, series: Latencies | None) -> None:
        loop = asyncio.get_running_loop()
        waiting = _waiting[run_id] = loop.create_future()
        start = time.perf_counter()
        try:
            await client.start_workflow(
                BaselineWorkflow.run,
                BaselineInput(run_id=run_id, question="ok?", **counts),
                id=run_id,
                task_queue=task_queue,
            )
            seen = await waiting
        finally:
            del _waiting[run_id]
        if series is not None:
            series.to_waiting.append((seen - start) * 1000)

    async def resume(run_id: str, series: Latencies | None) -> None:
        handle = client.get_workflow_handle_for(BaselineWorkflow.run, run_id)
        start = time.perf_counter()
        if fair:
            await handle.execute_update(BaselineWorkflow.answer, BaselineAnswer(ok=True), id=f"answer-{uuid.uuid4()}")
        else:
            await handle.signal(BaselineWorkflow.resume, BaselineAnswer(ok=True))
        done = await handle.result()
        end = time.perf_counter()
        if not done.ok:
            raise RuntimeError(f"{run_id}: unexpected result {done!r}")
        if series is not None:
            series.resume.append((end - start) * 1000)
            series.call.append((end - start) * 1000)

    async with baseline_worker(client, task_queue):
        await measure(result, options, client, f"base-{uuid.uuid4().hex[:8]}", Side(suspend, resume))
    result.after = memory(options.pid)
    return result


# Statistics and printing -------------------------------------------------------------------------


def _mb(kb: int | None) -> str:
    return "-" if kb is None else f"{kb / 1024:.0f}"


def _delta_mb(after: int | None, before: int | None) -> str:
    return "-" if after is None or before is None else f"{(after - before) / 1024:+.0f}"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def print_summary(sides: Sequence[SideResult], options: Options) -> None:
    """Tables: each side in a column, and tempo-agents (the first) over each baseline."""
    tempo, others = sides[0], sides[1:]
    width = 14

    def header() -> str:
        cells = [f"{tempo.side:>{width}}"]
        for other in others:
            cells += [f"{other.side:>{width}}", f"{'ratio':>7}"]
        return f"{'':<50} " + " ".join(cells)

    def row(label: str, values: Sequence[float | None], fmt: str) -> None:
        def cell(v: float | None) -> str:
            return "-" if v is None else format(v, fmt)

        cells = [f"{cell(values[0]):>{width}}"]
        for value in values[1:]:
            ratio = _ratio(values[0], value) if values[0] is not None and value is not None else "-"
            cells += [f"{cell(value):>{width}}", f"{ratio:>7}"]
        out(f"{label:<50} " + " ".join(cells))

    def series(label: str, pick: Callable[[Latencies], list[float]], which: str) -> None:
        for q in (0.5, 0.95):
            row(f"{label}, p{round(q * 100)} ms", [quantile(pick(getattr(r, which)), q) for r in sides], ".1f")

    out()
    out(f"{options.runs} runs per side, at most {options.concurrency} in flight")
    out(header())
    row("suspend: first start to last waiting, s", [r.suspend_s for r in sides], ".1f")
    row("suspend throughput, runs/s", [r.suspend_rate for r in sides], ".1f")
    series("start to waiting, per run", lambda s: s.to_waiting, "loaded")
    row("resume: first resume to last result, s", [r.resume_s for r in sides], ".1f")
    row("resume throughput, runs/s", [r.resume_rate for r in sides], ".1f")
    series("update/signal sent to result", lambda s: s.resume, "loaded")
    series("resume call to result", lambda s: s.call, "loaded")
    for phase in ("suspend", "resume"):
        for who, name in (("worker_s", "this process"), ("server_s", "dev server")):
            values: list[float | None] = []
            for r in sides:
                used: Cpu | None = getattr(r, f"{phase}_cpu")
                seconds = getattr(used, who) if used is not None else None
                values.append(None if seconds is None else seconds * 1000 / options.runs)
            row(f"CPU per run, {phase} phase, {name}, ms", values, ".1f")
    if all(r.shape is not None for r in sides):
        for label, attribute in (
            ("history events per run", "events"),
            ("history bytes per run (proto events)", "proto_bytes"),
            ("workflow tasks per run", "workflow_tasks"),
            ("activities per run", "activities"),
            ("local activities per run", "local_activities"),
        ):
            row(label, [getattr(r.shape, attribute) for r in sides], ".0f")

    if options.serial:
        out()
        out(f"{options.serial} runs one at a time (after {options.warmup} warm-up runs): latency without queueing")
        out(header())
        series("start to waiting", lambda s: s.to_waiting, "serial")
        series("update/signal sent to result", lambda s: s.resume, "serial")
        series("resume call to result", lambda s: s.call, "serial")

    out()
    out("memory (VmRSS after gc.collect() and malloc_trim(0)), MB")
    out(f"{'':<50} " + " ".join(f"{r.side:>18}" for r in sides))

    def memory_row(label: str, pick: Callable[[SideResult], int | None]) -> None:
        out(f"{label:<50} " + " ".join(f"{_mb(pick(r)):>18}" for r in sides))

    memory_row("worker process, before the runs", lambda r: r.before.worker_kb if r.before else None)
    memory_row("worker process, while the runs wait", lambda r: r.waiting.worker_kb if r.waiting else None)
    memory_row("worker process, after the side (worker stopped)", lambda r: r.after.worker_kb if r.after else None)
    memory_row("dev server, before the runs", lambda r: r.before.server_kb if r.before else None)
    memory_row("dev server, while the runs wait", lambda r: r.waiting.server_kb if r.waiting else None)
    for label, which in (("worker", "worker_kb"), ("dev server", "server_kb")):
        cells: list[str] = []
        for r in sides:
            after = getattr(r.waiting, which) if r.waiting else None
            before = getattr(r.before, which) if r.before else None
            growth = "-" if after is None or before is None else f"{(after - before) / 1024:+.0f}"
            each = "-" if after is None or before is None else f"{(after - before) / r.runs:.0f}"
            cells.append(f"{growth} ({each} KB/run)")
        out(f"{label + ' growth while the runs wait, MB':<50} " + " ".join(f"{c:>18}" for c in cells))

    out()
    for r in sides:
        if r.shape is not None:
            out(f"{r.side} activities, in order: {', '.join(r.shape.activity_types)}")
    if tempo.reads_per_run is not None and tempo.appends_per_run is not None:
        out(
            f"tempo-agents journal, suspend phase: {tempo.appends_per_run:.1f} appends and {tempo.reads_per_run:.1f} "
            "reads per run (every tailing client reads after any append it is woken for)"
        )


def quotable(tempo: SideResult, base: SideResult, bare: SideResult) -> str:
    """The last line: tempo-agents against the fair baseline, and the throughput ratios against the bare one."""
    t50, b50 = quantile(tempo.loaded.resume, 0.5), quantile(base.loaded.resume, 0.5)
    t95, b95 = quantile(tempo.loaded.resume, 0.95), quantile(base.loaded.resume, 0.95)
    rss = []
    for side in (tempo, base):
        waiting = side.waiting.worker_kb if side.waiting else None
        before = side.before.worker_kb if side.before else None
        rss.append(f"{_mb(waiting)}MB ({_delta_mb(waiting, before)})")
    return (
        f"suspend_resume: N={tempo.runs} "
        f"suspend tempo={tempo.suspend_rate:.1f}/s fair={base.suspend_rate:.1f}/s "
        f"({_ratio(tempo.suspend_rate, base.suspend_rate)}) "
        f"resume tempo={tempo.resume_rate:.1f}/s fair={base.resume_rate:.1f}/s "
        f"({_ratio(tempo.resume_rate, base.resume_rate)}) "
        f"latency p50 tempo={t50:.0f}ms fair={b50:.0f}ms ({_ratio(t50, b50)}) "
        f"p95 tempo={t95:.0f}ms fair={b95:.0f}ms ({_ratio(t95, b95)}) "
        f"bare: suspend ({_ratio(tempo.suspend_rate, bare.suspend_rate)}) "
        f"resume ({_ratio(tempo.resume_rate, bare.resume_rate)}) "
        f"worker RSS waiting tempo={rss[0]} fair={rss[1]}"
    )


# Server ------------------------------------------------------------------------------------------


# Main --------------------------------------------------------------------------------------------


async def bench(args: argparse.Namespace) -> int:
    began = time.perf_counter()
    out(
        f"suspend_resume: {args.runs} runs per side, at most {args.concurrency} in flight; {args.warmup} warm-up "
        f"and {args.serial} one-at-a-time runs per side first; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}"
    )
    load = os.getloadavg()[0]
    out(f"load average (1 min) at start: {load:.2f}" + (busy_warning() if load > 0.3 else ""))
    out(
        f"dev server: {'file ' + str(args.db_file) if args.db_file else 'in memory'}, "
        + ("stock dynamic config" if args.stock_server else " ".join(SERVER_ARGS[1::2]))
    )
    env = await start_server(args.db_file, stock=args.stock_server)
    options = Options(args.runs, args.concurrency, args.warmup, args.serial, server_pid())
    sides: dict[str, SideResult] = {}
    order = [BASELINE, FAIR, TEMPO] if args.baseline_first else [TEMPO, FAIR, BASELINE]
    try:
        with tempfile.TemporaryDirectory(prefix="tempo-bench-") as directory:
            for side in order:
                side_began = time.perf_counter()
                if side == TEMPO:
                    result = await run_tempo_side(env, Path(directory), options)
                elif side == FAIR:
                    result = await run_baseline_side(env, options, fair=True)
                else:
                    result = await run_baseline_side(env, options)
                sides[side] = result
                out(
                    f"{side}: {args.runs} suspended in {result.suspend_s:.1f} s, resumed in {result.resume_s:.1f} s; "
                    f"the side took {time.perf_counter() - side_began:.1f} s with its warm-up and settling"
                )
    finally:
        await env.shutdown()
    tempo, fair, base = sides[TEMPO], sides[FAIR], sides[BASELINE]
    print_summary([tempo, fair, base], options)
    load = os.getloadavg()[0]
    out()
    out(f"load average (1 min) at the end: {load:.2f}" + (busy_warning() if load > 2.5 else ""))
    out(f"total time: {time.perf_counter() - began:.0f} s")
    out(quotable(tempo, fair, base))
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--runs", type=int, default=1000, help="runs per side (default 1000)")
    parser.add_argument("--concurrency", type=int, default=50, help="runs in flight at once (default 50)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up runs per side, one at a time (default 5)")
    parser.add_argument(
        "--serial", type=int, default=20, help="runs per side measured one at a time, unloaded (default 20)"
    )
    add_dev_server_arguments(parser)
    parser.add_argument("--baseline-first", action="store_true", help="run the baseline side first")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.concurrency < 1 or args.warmup < 0 or args.serial < 0:
        parser.error("need --runs >= 1, --concurrency >= 1, --warmup >= 0, --serial >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("suspend_resume")
