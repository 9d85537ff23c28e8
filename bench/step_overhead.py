"""Per-step cost of an agent run against a bare-Temporal baseline, in one process, on one dev server.

    python bench/step_overhead.py [--steps 20] [--runs 10] [--warmup 2] [--db-file PATH] [--stock-server]
                                  [--telemetry] [--encryption] [--store sqlite|postgresql|postgresql://...]

tempo-agents side: an agent on a ``ScriptedModel`` whose every step but the last calls one no-op tool, run
for ``--steps`` steps (``max_steps`` = steps) with ``app.stream(...)`` + ``stream.result()``, as ``generate()``
does. Baseline: a bare workflow executing no-op activities in the order the agent run just before it executed
its activities (read from its history: a model step per step, a tool call per step but the last, a finish),
with small pydantic inputs. One worker runs both (same options, same task queue) against one embedded dev
server; runs are interleaved A B A B and warm-up runs are discarded. See bench/README.md for every figure.

``--store``: the App's store, SQLite in a temporary file (default), PostgreSQL on a throwaway server this
script starts (``postgresql``, as bench/store.py does) or at a URL. The baseline touches no store.

The last line is quotable::

    step_overhead: store=sqlite tempo=XX.Xms/step baseline=YY.Yms/step ratio=Z.ZZx

Where the time of a step goes: ``bench/profile_step.py``. ``--telemetry``: the App is instrumented
(``tempo_agents.telemetry.instrument``: Temporal's tracing interceptor on the client and the worker, so on the
baseline too, tempo-agents' spans and metrics) with an OpenTelemetry SDK tracer provider whose batch processor
hands every span to an exporter that drops it; compare ``tempo=`` with a run without the flag.

``--encryption``: a second App of the same agent, whose payloads are sealed in Temporal and whose store rows are
sealed at rest (one keyring of one key, the App's ``encryption_keys``), runs after each agent run on its own worker
and task queue; the last lines compare the two, off and on, measured in the same process on the same server
(``step_overhead encryption: off=... on=... cost=+N%``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
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
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `bench`, from any directory

from bench._common import (
    SERVER_ARGS,
    add_dev_server_arguments,
    add_store_argument,
    bench_parser,
    bench_store,
    busy_warning,
    describe_store,
    median,
    out,
    run_as_module,
    start_server,
    store_kind,
)
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, Usage, create_tool
from tempo_agents.encryption import EncryptionKey, Keyring
from tempo_agents.store.base import Store
from tempo_agents.workflows import activity_names

_T = TypeVar("_T")

AGENT_ID = "bench-agent"
TEMPO = "tempo-agents"
BASELINE = "baseline"
SEALED = "tempo+sealed"
"""The side of the agent runs whose payloads are encrypted (``--encryption``)."""
BENCH_KEYS = Keyring((EncryptionKey("bench", os.urandom(32)),))

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


def build_app(steps: int, store: str | Store, task_queue: str, client: Client, keys: Keyring | None = None) -> App:
    """An App with one agent whose every step but the last calls the no-op tool once (its payloads sealed under
    ``keys`` when given)."""
    noop = create_tool(id="noop", description="Does nothing and returns an empty object.", execute=_noop)
    # Usage is given, so the scripted model does not estimate it from the whole conversation each step (work a
    # real provider does on its side, not tempo-agents' overhead).
    usage = Usage(input_tokens=10, output_tokens=2, total_tokens=12)
    responses = [
        ScriptedResponse(text=f"Step {i}.", tool_calls=[ScriptedToolCall("noop", {})], usage=usage)
        for i in range(steps - 1)
    ]
    responses.append(ScriptedResponse(text="Done.", usage=usage))
    agent = Agent(
        id=AGENT_ID,
        instructions="Call noop until you are done.",
        model=ScriptedModel(responses),
        tools={"noop": noop},
        default_options={"max_steps": steps},
    )
    return App(agents=[agent], store=store, task_queue=task_queue, client=client, encryption_keys=keys)


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
    store_cpu_s: float | None = None
    """CPU time of the throwaway PostgreSQL server (postmaster and backends) from start to closed; ``None`` for
    SQLite (in this process) or a server this script did not start."""

    @property
    def per_step_ms(self) -> float:
        return self.result_s * 1000 / self.steps

    @property
    def closed_per_step_ms(self) -> float:
        return self.closed_s * 1000 / self.steps


class CpuClock:
    """CPU seconds used so far by this process, by its child processes (the dev server) and by the throwaway
    PostgreSQL server (``store_pid``: the postmaster, a child of this process kept apart, and its backends),
    from /proc.

    CPU time per step is steadier than wall time when other processes share the machine.
    """

    def __init__(self) -> None:
        self._ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.store_pid: int | None = None

    def read(self) -> tuple[float, float | None, float | None]:
        children, store = self._children()
        return time.process_time(), children, store

    def _children(self) -> tuple[float | None, float | None]:
        me, store_pid = os.getpid(), self.store_pid
        total, store, found = 0, 0, False
        try:
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                ticks = int(fields[11]) + int(fields[12])  # fields[1] is the parent pid; [11], [12] utime, stime
                if store_pid is not None and (int(entry.name) == store_pid or int(fields[1]) == store_pid):
                    store += ticks
                elif int(fields[1]) == me:
                    total += ticks
                    found = True
        except OSError:
            return None, None
        return (total / self._ticks if found else None), (store / self._ticks if store_pid is not None else None)


CPU = CpuClock()


def _cpu_since(before: tuple[float, float | None, float | None], record: RunRecord) -> None:
    process, server, store = CPU.read()
    record.process_cpu_s = process - before[0]
    record.server_cpu_s = server - before[1] if server is not None and before[1] is not None else None
    record.store_cpu_s = store - before[2] if store is not None and before[2] is not None else None


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


async def run_tempo(
    app: App, client: Client, steps: int, number: int, warmup: bool, *, tail: bool = True, side: str = TEMPO
) -> RunRecord:
    """One agent run, timed to its result; ``tail=False`` waits for the workflow without reading the journal."""
    cpu = CPU.read()
    start = time.perf_counter()
    stream = await app.stream(AGENT_ID, "Go.")
    handle = app.client.get_workflow_handle(stream.run_id)  # the App's converter: it may decrypt
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
    record = RunRecord(side, number, warmup, steps, (done if tail else closed) - start, closed - start)
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


def ms_summary(values: Sequence[float]) -> str:
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
    if all(r.store_cpu_s is not None for r in measured):
        label = "CPU per step, PostgreSQL server, median ms"
        row(label, lambda r: (r.store_cpu_s or 0.0) * 1000 / steps, median, ".2f")
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


class _DroppedSpans:
    """An OpenTelemetry SDK tracer provider with a batch processor, and an exporter that counts and drops."""

    def __init__(self) -> None:
        from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

        spans = self

        class Dropping(SpanExporter):
            def export(self, batch: Sequence[ReadableSpan]) -> SpanExportResult:
                spans.count += len(batch)
                return SpanExportResult.SUCCESS

        self.count = 0
        self.provider = TracerProvider()
        self.provider.add_span_processor(BatchSpanProcessor(Dropping()))


def _instrument(app: App) -> _DroppedSpans:
    from tempo_agents.telemetry import instrument

    spans = _DroppedSpans()
    instrument(app, tracer_provider=spans.provider)
    return spans


async def bench(args: argparse.Namespace) -> int:
    steps: int = args.steps
    out(
        f"step_overhead: {steps} steps per run, {args.warmup} warm-up + {args.runs} measured runs per side, "
        f"interleaved; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}"
        + ("; telemetry on" if args.telemetry else "")
    )
    out(f"store: {describe_store(args.store)}")
    load = os.getloadavg()[0]
    out(f"load average (1 min) at start: {load:.2f}" + (busy_warning() if load > 0.3 else ""))
    out(
        f"dev server: {'file ' + str(args.db_file) if args.db_file else 'in memory'}, "
        + ("stock dynamic config" if args.stock_server else " ".join(SERVER_ARGS[1::2]))
    )
    env = await start_server(args.db_file, stock=args.stock_server)

    try:
        with (
            tempfile.TemporaryDirectory(prefix="tempo-bench-") as directory,
            bench_store(args.store, Path(directory)) as store,
        ):
            CPU.store_pid = store.server_pid
            client = env.client
            task_queue = f"bench-{uuid.uuid4()}"
            app = build_app(steps, store.url, task_queue, client)
            sealed = None
            if args.encryption:
                sealed = build_app(steps, store.url, f"{task_queue}-sealed", client, BENCH_KEYS)
            spans = _instrument(app) if args.telemetry else None
            records: list[RunRecord] = []
            out()
            print_run_header()
            async with contextlib.AsyncExitStack() as workers:
                await workers.enter_async_context(app.worker(plugins=[BaselinePlugin()]))
                if sealed is not None:
                    await workers.enter_async_context(sealed.worker())
                for number in range(args.warmup + args.runs):
                    warmup = number < args.warmup
                    label = number if warmup else number - args.warmup
                    tempo = await run_tempo(app, client, steps, label, warmup)
                    print_run(tempo)
                    base = await run_baseline(client, task_queue, steps, tempo.plan, label, warmup)
                    print_run(base)
                    records += [tempo, base]
                    if sealed is not None:
                        records.append(await run_tempo(sealed, client, steps, label, warmup, side=SEALED))
                        print_run(records[-1])
                tempo_ms, base_ms, tempo_cpu, base_cpu = summarise(records, steps)
            await app.store.close()
            if spans is not None:
                spans.provider.shutdown()
                out(f"telemetry on: {spans.count} spans exported (and dropped)")
    finally:
        await env.shutdown()
    load = os.getloadavg()[0]
    out()
    out(f"load average (1 min) at the end: {load:.2f}" + (busy_warning() if load > 2.5 else ""))
    kind = store_kind(args.store)
    out(
        f"step_overhead (CPU of this process, steadier on a busy machine): store={kind} tempo={tempo_cpu:.1f}ms/step "
        f"baseline={base_cpu:.1f}ms/step ratio={tempo_cpu / base_cpu:.2f}x"
    )
    out(
        f"step_overhead: store={kind} tempo={tempo_ms:.1f}ms/step baseline={base_ms:.1f}ms/step "
        f"ratio={tempo_ms / base_ms:.2f}x"
    )
    if args.encryption:
        summarise_encryption(records)
    return 0


def summarise_encryption(records: Sequence[RunRecord]) -> None:
    """Encryption off (the agent runs) against on (the sealed App's runs, each just after one of them): the median
    wall and CPU milliseconds per step, and the cost."""
    measured = [r for r in records if not r.warmup]

    def medians(side: str) -> tuple[float, float]:
        runs = [r for r in measured if r.side == side]
        return median([r.per_step_ms for r in runs]), median([r.process_cpu_s * 1000 / r.steps for r in runs])

    (off_ms, off_cpu), (on_ms, on_cpu) = medians(TEMPO), medians(SEALED)
    out(
        f"step_overhead encryption (CPU of this process): off={off_cpu:.1f}ms/step on={on_cpu:.1f}ms/step "
        f"cost={(on_cpu / off_cpu - 1) * 100:+.1f}%"
    )
    out(
        f"step_overhead encryption: off={off_ms:.1f}ms/step on={on_ms:.1f}ms/step "
        f"cost={(on_ms / off_ms - 1) * 100:+.1f}%"
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--steps", type=int, default=20, help="model steps per agent run (default 20)")
    parser.add_argument("--runs", type=int, default=10, help="measured runs per side (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up runs per side, discarded (default 2)")
    add_dev_server_arguments(parser)
    add_store_argument(parser)
    parser.add_argument("--telemetry", action="store_true", help="trace and count the runs (spans exported to nowhere)")
    parser.add_argument(
        "--encryption", action="store_true", help="also run the agent with its payloads encrypted, and compare"
    )
    args = parser.parse_args(argv)
    if args.steps < 2 or args.runs < 1 or args.warmup < 0:
        parser.error("need --steps >= 2, --runs >= 1, --warmup >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("step_overhead")
