"""Per-step cost of an agent run against a bare-Temporal baseline, in one process, on one dev server.

    python bench/step_overhead.py [--steps 20] [--runs 10] [--warmup 2] [--db-file PATH] [--stock-server]
                                  [--profile] [--profile-runs 5]

tempo-agents side: an agent on a ``ScriptedModel`` whose every step but the last calls one no-op tool, run
for ``--steps`` steps (``max_steps`` = steps) with ``app.stream(...)`` + ``stream.result()``, as ``generate()``
does. Baseline: a bare workflow executing no-op activities in the order the agent run just before it executed
its activities (read from its history: a model step per step, a tool call per step but the last, a finish),
with small pydantic inputs. One worker runs both (same options, same task queue) against one embedded dev
server; runs are interleaved A B A B and warm-up runs are discarded. See bench/README.md for every figure.

The last line is quotable::

    step_overhead: tempo=XX.Xms/step baseline=YY.Yms/step ratio=Z.ZZx

``--profile`` adds: the cost of tailing the journal in-process, instrumented tempo-agents runs (activity body
times from a worker interceptor, store calls and SQLite commits per step) and a store micro-benchmark.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import dataclasses
import functools
import inspect
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel
from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory
from temporalio.common import RetryPolicy
from temporalio.plugin import SimplePlugin
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `bench`, from any directory

from bench._common import SERVER_ARGS, busy_warning, median, out, run_as_module, start_server
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.store.base import ChunkWrite, Store, TranscriptEntry
from tempo_agents.store.sqlite import SQLiteStore
from tempo_agents.workflows import activity_names

_T = TypeVar("_T")

AGENT_ID = "bench-agent"
TEMPO = "tempo-agents"
BASELINE = "baseline"

MODEL, TOOL, FINISH, OTHER, LOCAL = "model step", "tool call", "finish", "other activity", "local activity"
TEMPO_ROLES = {activity_names.MODEL_STEP: MODEL, activity_names.TOOL_CALL: TOOL, activity_names.FINISH_RUN: FINISH}
BASELINE_ACTIVITY = {
    MODEL: "bench.model_step",
    TOOL: "bench.tool_call",
    FINISH: "bench.finish_run",
    OTHER: "bench.other",
}
BASELINE_LOCAL = "bench.local"
ROLES = {**TEMPO_ROLES, **{name: role for role, name in BASELINE_ACTIVITY.items()}, BASELINE_LOCAL: LOCAL}
LOCAL_ACTIVITY_MARKER = "core_local_activity"

FILLER = "x" * 320
"""Makes the baseline's activity inputs about the size of the agent's (both are printed)."""

ACTIVITY_TIMEOUT = timedelta(minutes=10)
ACTIVITY_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)


def role_of(activity_type: str) -> str:
    """What an activity stands for (model step, tool call, ...); an unknown activity keeps its name."""
    return ROLES.get(activity_type, activity_type)


# Baseline: a bare workflow of no-op activities ---------------------------------------------------


class BaselineInput(BaseModel):
    run_id: str
    agent_id: str
    plan: list[str]
    """The roles of the activities to execute, in order (``MODEL``, ``TOOL``, ``FINISH``, ``OTHER``, ``LOCAL``)."""


class BaselineStepInput(BaseModel):
    run_id: str
    agent_id: str
    step: int
    note: str


class BaselineStepResult(BaseModel):
    finish_reason: str
    input_tokens: int
    output_tokens: int


class BaselineResult(BaseModel):
    run_id: str
    activities: int


def _baseline_activity(name: str) -> Callable[[BaselineStepInput], Awaitable[BaselineStepResult]]:
    async def noop(step_input: BaselineStepInput) -> BaselineStepResult:
        return BaselineStepResult(finish_reason="stop", input_tokens=step_input.step, output_tokens=2)

    return activity.defn(name=name)(noop)


BASELINE_ACTIVITIES = [_baseline_activity(name) for name in (*BASELINE_ACTIVITY.values(), BASELINE_LOCAL)]


@workflow.defn(name="StepOverheadBaseline")
class BaselineWorkflow:
    """Executes no-op activities in the order an agent run executed its activities (the plan)."""

    @workflow.run
    async def run(self, run_input: BaselineInput) -> BaselineResult:
        models = 0
        for role in run_input.plan:
            step = models if role != TOOL else models - 1
            models += role == MODEL
            item = BaselineStepInput(run_id=run_input.run_id, agent_id=run_input.agent_id, step=step, note=FILLER)
            if role == LOCAL:
                await workflow.execute_local_activity(
                    BASELINE_LOCAL, item, result_type=BaselineStepResult, start_to_close_timeout=ACTIVITY_TIMEOUT
                )
            else:
                await workflow.execute_activity(
                    BASELINE_ACTIVITY.get(role, BASELINE_ACTIVITY[OTHER]),
                    item,
                    result_type=BaselineStepResult,
                    start_to_close_timeout=ACTIVITY_TIMEOUT,
                    retry_policy=ACTIVITY_RETRY,
                )
        return BaselineResult(run_id=run_input.run_id, activities=len(run_input.plan))


def activity_plan(history: WorkflowHistory) -> list[str]:
    """The roles of the activities (and local activities) a run executed, in history order."""
    plan: list[str] = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            role = role_of(event.activity_task_scheduled_event_attributes.activity_type.name)
            plan.append(role if role in BASELINE_ACTIVITY else OTHER)
        elif (
            event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
            and event.marker_recorded_event_attributes.marker_name == LOCAL_ACTIVITY_MARKER
        ):
            plan.append(LOCAL)
    return plan


def _pass_bench_through(existing: WorkflowRunner | None) -> WorkflowRunner:
    """Keep the plugin's sandbox, and let it take this module as is (as tempo_agents is), not re-import it."""
    if not isinstance(existing, SandboxedWorkflowRunner):
        raise RuntimeError(f"expected tempo-agents' sandboxed workflow runner, got {existing!r}")
    restrictions = existing.restrictions.with_passthrough_modules(__name__.split(".")[0])
    return dataclasses.replace(existing, restrictions=restrictions)


class BaselinePlugin(SimplePlugin):
    """Adds the baseline workflow and activities to the App's worker: one worker runs both sides."""

    def __init__(self) -> None:
        super().__init__(
            "bench.step_overhead.BaselinePlugin",
            workflows=[BaselineWorkflow],
            activities=BASELINE_ACTIVITIES,
            workflow_runner=_pass_bench_through,
        )


# tempo-agents side -------------------------------------------------------------------------------


async def _noop(data: Any, context: ToolContext) -> dict[str, Any]:
    return {}


def build_app(steps: int, store: str | Store, task_queue: str, client: Client) -> App:
    """An App with one agent whose every step but the last calls the no-op tool once."""
    noop = create_tool(id="noop", description="Does nothing and returns an empty object.", execute=_noop)
    responses = [
        ScriptedResponse(text=f"Step {i}.", tool_calls=[ScriptedToolCall("noop", {})]) for i in range(steps - 1)
    ]
    responses.append(ScriptedResponse(text="Done."))
    agent = Agent(
        id=AGENT_ID,
        instructions="Call noop until you are done.",
        model=ScriptedModel(responses),
        tools={"noop": noop},
        default_options={"max_steps": steps},
    )
    return App(agents=[agent], store=store, task_queue=task_queue, client=client)


# Measurements ------------------------------------------------------------------------------------


@dataclass
class RunRecord:
    side: str
    number: int
    warmup: bool
    steps: int
    result_s: float
    """Start to result: ``stream.result()`` (the finish chunk) for tempo-agents, ``handle.result()`` for baseline."""
    closed_s: float
    """Start to the workflow's result as ``handle.result()`` sees it (for both sides)."""
    events: int = 0
    json_bytes: int = 0
    proto_bytes: int = 0
    activities: int = 0
    local_activities: int = 0
    plan: list[str] = field(default_factory=list)
    breakdown: dict[str, float] = field(default_factory=dict)
    input_bytes: dict[str, list[int]] = field(default_factory=dict)
    process_cpu_s: float = 0.0
    """CPU time of this process (worker, client, SQLite thread) from start to closed."""
    server_cpu_s: float | None = None
    """CPU time of the dev server from start to closed (``None`` where /proc cannot tell)."""

    @property
    def per_step_ms(self) -> float:
        return self.result_s * 1000 / self.steps

    @property
    def closed_per_step_ms(self) -> float:
        return self.closed_s * 1000 / self.steps


class CpuClock:
    """CPU seconds used so far by this process and by its child processes (the dev server), from /proc.

    CPU time per step is steadier than wall time when other processes share the machine.
    """

    def __init__(self) -> None:
        self._ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def read(self) -> tuple[float, float | None]:
        return time.process_time(), self._children()

    def _children(self) -> float | None:
        me, total, found = os.getpid(), 0, False
        try:
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == me:  # fields[1] is the parent pid; [11], [12] are utime and stime
                    total += int(fields[11]) + int(fields[12])
                    found = True
        except OSError:
            return None
        return total / self._ticks if found else None


CPU = CpuClock()


def _cpu_since(before: tuple[float, float | None], record: RunRecord) -> None:
    process, server = CPU.read()
    record.process_cpu_s = process - before[0]
    record.server_cpu_s = server - before[1] if server is not None and before[1] is not None else None


def _nanos(event: HistoryEvent) -> int:
    return int(event.event_time.ToNanoseconds())


BREAKDOWN = (
    "activity queue (scheduled to started)",
    "activity execution (started to closed)",
    "workflow task queue",
    "workflow task execution",
    "other server time",
    "client side (start RPC, result delivery)",
)


def analyse_history(history: WorkflowHistory, record: RunRecord) -> None:
    """History size, activity count and payload sizes, and where the time went by server timestamps.

    Activities run one after the other in both workflows, so the parts add up to the run's time.
    """
    events = list(history.events)
    record.events = len(events)
    record.json_bytes = len(history.to_json())
    record.proto_bytes = sum(event.ByteSize() for event in events)
    record.plan = activity_plan(history)
    record.local_activities = record.plan.count(LOCAL)
    scheduled: dict[int, HistoryEvent] = {}
    started: dict[int, HistoryEvent] = {}
    wft_scheduled: dict[int, HistoryEvent] = {}
    wft_started: dict[int, HistoryEvent] = {}
    parts = dict.fromkeys(BREAKDOWN, 0)
    for event in events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled[event.event_id] = event
            attributes = event.activity_task_scheduled_event_attributes
            size = sum(p.ByteSize() for p in attributes.input.payloads)
            record.input_bytes.setdefault(role_of(attributes.activity_type.name), []).append(size)
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started[event.activity_task_started_event_attributes.scheduled_event_id] = event
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            key = event.activity_task_completed_event_attributes.scheduled_event_id
            record.activities += 1
            if key in started:
                parts[BREAKDOWN[0]] += _nanos(started[key]) - _nanos(scheduled[key])
                parts[BREAKDOWN[1]] += _nanos(event) - _nanos(started[key])
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            wft_scheduled[event.event_id] = event
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            key = event.workflow_task_started_event_attributes.scheduled_event_id
            wft_started[event.event_id] = event
            parts[BREAKDOWN[2]] += _nanos(event) - _nanos(wft_scheduled[key])
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            key = event.workflow_task_completed_event_attributes.started_event_id
            parts[BREAKDOWN[3]] += _nanos(event) - _nanos(wft_started[key])
    total = _nanos(events[-1]) - _nanos(events[0])
    parts[BREAKDOWN[4]] = total - sum(parts.values())
    record.breakdown = {name: value / 1e9 for name, value in parts.items()}
    record.breakdown[BREAKDOWN[5]] = record.result_s - total / 1e9


async def _within(steps: int, work: Awaitable[_T]) -> _T:
    """A run that hangs (a workflow task failing forever, say) stops the bench instead of blocking it."""
    timeout = 30.0 + steps
    try:
        return await asyncio.wait_for(work, timeout)
    except TimeoutError:
        raise RuntimeError(f"a run of {steps} steps did not finish within {timeout:.0f} s") from None


async def run_tempo(app: App, client: Client, steps: int, number: int, warmup: bool, *, tail: bool = True) -> RunRecord:
    """One agent run, timed to its result; ``tail=False`` waits for the workflow without reading the journal."""
    cpu = CPU.read()
    start = time.perf_counter()
    stream = await app.stream(AGENT_ID, "Go.")
    handle = client.get_workflow_handle(stream.run_id)
    result = await _within(steps, stream.result()) if tail else None
    done = time.perf_counter()
    await _within(steps, handle.result())
    closed = time.perf_counter()
    if result is not None and (
        result.finish_reason != "stop" or result.steps != steps or len(result.tool_results) != steps - 1
    ):
        raise RuntimeError(
            f"unexpected agent run: finish_reason={result.finish_reason} steps={result.steps} "
            f"tool_results={len(result.tool_results)} error={result.error}"
        )
    record = RunRecord(TEMPO, number, warmup, steps, (done if tail else closed) - start, closed - start)
    _cpu_since(cpu, record)
    analyse_history(await handle.fetch_history(), record)
    return record


async def run_baseline(
    client: Client, task_queue: str, steps: int, plan: list[str], number: int, warmup: bool
) -> RunRecord:
    """One baseline run executing ``plan`` (the activities of the agent run just before it)."""
    run_id = str(uuid.uuid4())
    cpu = CPU.read()
    start = time.perf_counter()
    handle = await client.start_workflow(
        BaselineWorkflow.run,
        BaselineInput(run_id=run_id, agent_id=AGENT_ID, plan=plan),
        id=run_id,
        task_queue=task_queue,
    )
    result = await _within(steps, handle.result())
    done = time.perf_counter()
    if result.activities != len(plan):
        raise RuntimeError(f"unexpected baseline result {result!r}")
    record = RunRecord(BASELINE, number, warmup, steps, done - start, done - start)
    _cpu_since(cpu, record)
    analyse_history(await handle.fetch_history(), record)
    return record


# Statistics and printing -------------------------------------------------------------------------


def p90(values: Sequence[float]) -> float:
    if len(values) < 2:
        return median(values)
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def _per_step(seconds: float | None, steps: int) -> str:
    return "-" if seconds is None else f"{seconds * 1000 / steps:.2f}"


def _ms(values: Sequence[float]) -> str:
    """The median, or ``-`` when there is nothing to take it of."""
    return f"{median(values):.2f}" if values else "-"


def print_run_header() -> None:
    out(
        f"{'run':>4}  {'side':<12} {'result ms':>10} {'ms/step':>8} {'closed ms':>10} {'CPU ms/step':>11} "
        f"{'server CPU':>10} {'events':>7} {'history JSON B':>14} {'history proto B':>15} {'activities':>10} "
        f"{'local':>5}"
    )


def print_run(record: RunRecord) -> None:
    tag = f"w{record.number}" if record.warmup else str(record.number)
    out(
        f"{tag:>4}  {record.side:<12} {record.result_s * 1000:>10.1f} {record.per_step_ms:>8.2f} "
        f"{record.closed_s * 1000:>10.1f} {record.process_cpu_s * 1000 / record.steps:>11.2f} "
        f"{_per_step(record.server_cpu_s, record.steps):>10} {record.events:>7} {record.json_bytes:>14} "
        f"{record.proto_bytes:>15} {record.activities:>10} {record.local_activities:>5}"
    )


def summarise(records: Sequence[RunRecord], steps: int) -> tuple[float, float, float, float]:
    """Print the summary tables; returns the median per-step wall and CPU milliseconds of tempo and baseline."""
    measured = [r for r in records if not r.warmup]
    tempo = [r for r in measured if r.side == TEMPO]
    base = [r for r in measured if r.side == BASELINE]

    def row(label: str, pick: Callable[[RunRecord], float], agg: Callable[[Sequence[float]], float], fmt: str) -> None:
        a, b = agg([pick(r) for r in tempo]), agg([pick(r) for r in base])
        ratio = f"{a / b:.2f}x" if b else "-"
        out(f"{label:<42} {a:>14{fmt}} {b:>14{fmt}} {ratio:>8}")

    def mean_input(role: str) -> Callable[[RunRecord], float]:
        return lambda r: statistics.fmean(r.input_bytes.get(role, [0]))

    out()
    out(f"summary over {len(tempo)} measured runs per side, {steps} steps per run (warm-up runs excluded)")
    out(f"{'':<42} {TEMPO:>14} {BASELINE:>14} {'ratio':>8}")
    row("per step, start to result, median ms", lambda r: r.per_step_ms, median, ".2f")
    row("per step, start to result, p90 ms", lambda r: r.per_step_ms, p90, ".2f")
    row("per step, start to workflow closed, median", lambda r: r.closed_per_step_ms, median, ".2f")
    row("per step, start to workflow closed, p90", lambda r: r.closed_per_step_ms, p90, ".2f")
    row("run, start to result, median ms", lambda r: r.result_s * 1000, median, ".1f")
    row("CPU per step, this process, median ms", lambda r: r.process_cpu_s * 1000 / steps, median, ".2f")
    if all(r.server_cpu_s is not None for r in measured):
        row("CPU per step, dev server, median ms", lambda r: (r.server_cpu_s or 0.0) * 1000 / steps, median, ".2f")
    row("activities per run", lambda r: r.activities, median, ".0f")
    row("local activities per run", lambda r: r.local_activities, median, ".0f")
    row("history events per run", lambda r: r.events, median, ".0f")
    row("history bytes per run (JSON)", lambda r: r.json_bytes, median, ".0f")
    row("history bytes per run (proto events)", lambda r: r.proto_bytes, median, ".0f")
    for role in (MODEL, TOOL, FINISH):
        row(f"activity input bytes, {role} (mean)", mean_input(role), median, ".0f")

    out()
    out("where the time goes, ms per step (server event timestamps; median over runs of run total / steps)")
    out(f"{'':<42} {TEMPO:>14} {BASELINE:>14} {'diff':>8}")
    for name in (*BREAKDOWN, "total"):
        a = median([(r.breakdown[name] if name != "total" else r.result_s) * 1000 / steps for r in tempo])
        b = median([(r.breakdown[name] if name != "total" else r.result_s) * 1000 / steps for r in base])
        out(f"{name:<42} {a:>14.2f} {b:>14.2f} {a - b:>+8.2f}")
    return (
        median([r.per_step_ms for r in tempo]),
        median([r.per_step_ms for r in base]),
        median([r.process_cpu_s * 1000 / steps for r in tempo]),
        median([r.process_cpu_s * 1000 / steps for r in base]),
    )


# Profiling ---------------------------------------------------------------------------------------


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
        early = _ms([t.seconds * 1000 for t in times if 0 <= t.step < quarter])
        late = _ms([t.seconds * 1000 for t in times if t.step >= steps - quarter])
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


async def bench(args: argparse.Namespace) -> int:
    steps: int = args.steps
    out(
        f"step_overhead: {steps} steps per run, {args.warmup} warm-up + {args.runs} measured runs per side, "
        f"interleaved; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}"
    )
    load = os.getloadavg()[0]
    out(f"load average (1 min) at start: {load:.2f}" + (busy_warning() if load > 0.3 else ""))
    out(
        f"dev server: {'file ' + str(args.db_file) if args.db_file else 'in memory'}, "
        + ("stock dynamic config" if args.stock_server else " ".join(SERVER_ARGS[1::2]))
    )
    env = await start_server(args.db_file, stock=args.stock_server)

    try:
        with tempfile.TemporaryDirectory(prefix="tempo-bench-") as directory:
            tmp = Path(directory)
            client = env.client
            task_queue = f"bench-{uuid.uuid4()}"
            app = build_app(steps, f"sqlite:///{tmp / 'store.db'}", task_queue, client)
            records: list[RunRecord] = []
            out()
            print_run_header()
            async with app.worker(plugins=[BaselinePlugin()]):
                for number in range(args.warmup + args.runs):
                    warmup = number < args.warmup
                    label = number if warmup else number - args.warmup
                    tempo = await run_tempo(app, client, steps, label, warmup)
                    print_run(tempo)
                    base = await run_baseline(client, task_queue, steps, tempo.plan, label, warmup)
                    print_run(base)
                    records += [tempo, base]
                tempo_ms, base_ms, tempo_cpu, base_cpu = summarise(records, steps)
                if args.profile:
                    await profile_tailing(app, client, steps, args.runs)
            await app.store.close()
            if args.profile:
                await profile(client, tmp, steps, args.profile_runs)
    finally:
        await env.shutdown()
    load = os.getloadavg()[0]
    out()
    out(f"load average (1 min) at the end: {load:.2f}" + (busy_warning() if load > 2.5 else ""))
    out(
        f"step_overhead (CPU of this process, steadier on a busy machine): tempo={tempo_cpu:.1f}ms/step "
        f"baseline={base_cpu:.1f}ms/step ratio={tempo_cpu / base_cpu:.2f}x"
    )
    out(f"step_overhead: tempo={tempo_ms:.1f}ms/step baseline={base_ms:.1f}ms/step ratio={tempo_ms / base_ms:.2f}x")
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20, help="model steps per agent run (default 20)")
    parser.add_argument("--runs", type=int, default=10, help="measured runs per side (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up runs per side, discarded (default 2)")
    parser.add_argument(
        "--db-file", type=Path, default=None, help="file-backed dev server (as `tempo-agents dev`), else in memory"
    )
    parser.add_argument(
        "--stock-server",
        action="store_true",
        help="keep the dev server's default transfer-queue poll limit (20/s), which adds ~40 ms per workflow task",
    )
    parser.add_argument("--profile", action="store_true", help="also profile where tempo-agents' step time goes")
    parser.add_argument("--profile-runs", type=int, default=5, help="instrumented runs with --profile (default 5)")
    args = parser.parse_args(argv)
    if args.steps < 2 or args.runs < 1 or args.warmup < 0 or args.profile_runs < 1:
        parser.error("need --steps >= 2, --runs >= 1, --warmup >= 0, --profile-runs >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("step_overhead")
