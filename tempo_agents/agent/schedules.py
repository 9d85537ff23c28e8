"""Schedules: runs of an agent started by a Temporal Schedule, each an ordinary run of ``AgentRunWorkflow``.

The schedule's action starts the workflow with a :class:`RunInput` whose ``run_id`` is empty: Temporal gives every
scheduled start the workflow id ``<schedule id>-<scheduled time>``, and the workflow takes that as its run id. Each
run carries the memo ``{"schedule": <schedule id>}`` (Temporal adds the ``TemporalScheduledById`` search attribute
too), and the schedule's own memo names the agent and the App's task queue, which is how an App finds its schedules.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic import Field
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionExecutionStartWorkflow,
    ScheduleActionStartWorkflow,
    ScheduleBackfill,
    ScheduleDescription,
    ScheduleHandle,
    ScheduleIntervalSpec,
    ScheduleListActionStartWorkflow,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
)
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents._wire import WireModel
from tempo_agents.agent.agent import Agent
from tempo_agents.agent.local_activities import workflow_task_timeout
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import MessageInput
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import RunInput

__all__ = [
    "OVERLAP_POLICIES",
    "SCHEDULED_BY",
    "SCHEDULE_MEMO",
    "AgentSchedule",
    "ScheduleRequest",
    "ScheduleView",
    "ScheduledRun",
    "SchedulingApp",
    "create_schedule",
    "list_schedules",
    "parse_duration",
]

SCHEDULE_MEMO = "schedule"
"""The memo key of a scheduled run: the id of the schedule that started it."""
SCHEDULED_BY = SearchAttributeKey.for_keyword("TemporalScheduledById")
"""The search attribute Temporal gives every run a schedule started: the schedule's id."""
AGENT_MEMO = "tempoAgentId"
TASK_QUEUE_MEMO = "tempoAgentsTaskQueue"
CRON_MEMO = "tempoAgentsCron"
"""The cron as given: the server keeps it translated into calendar specs."""

OVERLAP_POLICIES: dict[str, ScheduleOverlapPolicy] = {
    "skip": ScheduleOverlapPolicy.SKIP,
    "buffer_one": ScheduleOverlapPolicy.BUFFER_ONE,
    "buffer_all": ScheduleOverlapPolicy.BUFFER_ALL,
    "cancel_other": ScheduleOverlapPolicy.CANCEL_OTHER,
    "terminate_other": ScheduleOverlapPolicy.TERMINATE_OTHER,
    "allow_all": ScheduleOverlapPolicy.ALLOW_ALL,
}
"""What a schedule does when a run is due while the previous one still runs (or waits for a person); ``skip`` by
default, as Temporal does."""

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: str | timedelta) -> timedelta:
    """``"90s"``, ``"15m"``, ``"1h30m"``, ``"7d"`` (units ms, s, m, h, d), or a ``timedelta`` as it is."""
    if isinstance(value, timedelta):
        return value
    text = value.strip().replace(" ", "")
    parts = _DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise ConfigurationError(f'"{value}" is not a duration: write it as 30s, 15m, 1h30m or 7d')
    return timedelta(seconds=sum(float(number) * _UNITS[unit] for number, unit in parts))


def _overlap(value: str | ScheduleOverlapPolicy | None) -> ScheduleOverlapPolicy | None:
    if value is None or isinstance(value, ScheduleOverlapPolicy):
        return value
    try:
        return OVERLAP_POLICIES[value.lower().replace("-", "_")]
    except KeyError:
        raise ConfigurationError(f'unknown overlap policy "{value}": one of {", ".join(OVERLAP_POLICIES)}') from None


def _overlap_name(policy: ScheduleOverlapPolicy) -> str:
    for name, known in OVERLAP_POLICIES.items():
        if known == policy:
            return name
    return "skip"  # UNSPECIFIED: the server's default


class SchedulingApp(Protocol):
    """What schedules need of an App: its client and task queue, its agents and how it prepares a run."""

    task_queue: str

    @property
    def client(self) -> Client: ...

    def agent(self, agent_id: str) -> Agent: ...

    def prepare_run(
        self, agent: Agent, messages: MessageInput, options: Mapping[str, Any]
    ) -> tuple[RunInput, list[SearchAttributePair[str]]]: ...


class ScheduledRun(WireModel):
    """A run a schedule started: its run id (the workflow id), when it was due and when it started."""

    run_id: str
    scheduled_at: datetime
    started_at: datetime


class ScheduleView(WireModel):
    """A schedule as a user sees it: when it runs, its state, its next and its recent runs."""

    id: str
    agent_id: str | None = None
    cron: list[str] = Field(default_factory=list)
    every_seconds: list[float] = Field(default_factory=list)
    time_zone: str | None = None
    jitter_seconds: float | None = None
    overlap: str = "skip"
    catchup_window_seconds: float | None = None
    paused: bool = False
    note: str | None = None
    runs_started: int = 0
    next_runs: list[datetime] = Field(default_factory=list)
    """The next times it is due (up to 10), earliest first."""
    recent_runs: list[ScheduledRun] = Field(default_factory=list)
    """Its latest runs (up to 10), oldest first."""
    running: list[str] = Field(default_factory=list)
    """The run ids of its runs that have not closed."""
    created_at: datetime | None = None


def describe_view(description: ScheduleDescription, memo: Mapping[str, Any]) -> ScheduleView:
    """A :class:`ScheduleView` of a described schedule (its memo already read)."""
    schedule = description.schedule
    spec = schedule.spec
    info = description.info
    return ScheduleView(
        id=description.id,
        agent_id=memo.get(AGENT_MEMO),
        cron=[memo[CRON_MEMO]] if memo.get(CRON_MEMO) else list(spec.cron_expressions),
        every_seconds=[interval.every.total_seconds() for interval in spec.intervals],
        time_zone=spec.time_zone_name,
        jitter_seconds=spec.jitter.total_seconds() if spec.jitter is not None else None,
        overlap=_overlap_name(schedule.policy.overlap),
        catchup_window_seconds=(
            schedule.policy.catchup_window.total_seconds() if schedule.policy.catchup_window is not None else None
        ),
        paused=schedule.state.paused,
        note=schedule.state.note,
        runs_started=info.num_actions,
        next_runs=list(info.next_action_times),
        recent_runs=[
            ScheduledRun(
                run_id=result.action.workflow_id, scheduled_at=result.scheduled_at, started_at=result.started_at
            )
            for result in info.recent_actions
            if isinstance(result.action, ScheduleActionExecutionStartWorkflow)
        ],
        running=[
            execution.workflow_id
            for execution in info.running_actions
            if isinstance(execution, ScheduleActionExecutionStartWorkflow)
        ],
        created_at=info.created_at,
    )


class AgentSchedule:
    """A handle on one schedule of an App (``await app.schedule(...)`` or ``app.get_schedule(id)``)."""

    def __init__(self, handle: ScheduleHandle) -> None:
        self.handle = handle
        self.id = handle.id

    async def describe(self) -> ScheduleView:
        """The schedule now: spec, state, next and recent runs."""
        description = await self.handle.describe()
        return describe_view(description, await description.memo())

    async def pause(self, note: str | None = None) -> None:
        """Start no more runs until :meth:`unpause` (runs already started go on)."""
        await self.handle.pause(note=note)

    async def unpause(self, note: str | None = None) -> None:
        await self.handle.unpause(note=note)

    async def trigger(self, *, overlap: str | ScheduleOverlapPolicy | None = None) -> None:
        """Start a run now, whatever the spec says (the schedule's overlap policy applies unless ``overlap``)."""
        await self.handle.trigger(overlap=_overlap(overlap))

    async def backfill(
        self, start_at: datetime, end_at: datetime, *, overlap: str | ScheduleOverlapPolicy | None = None
    ) -> None:
        """Start the runs that were due between ``start_at`` and ``end_at``, as if the schedule had run then."""
        await self.handle.backfill(ScheduleBackfill(start_at=start_at, end_at=end_at, overlap=_overlap(overlap)))

    async def delete(self) -> None:
        """Delete the schedule (its runs, started or closed, stay as they are)."""
        await self.handle.delete()


class ScheduleRequest(WireModel):
    """A schedule as the CLI and the HTTP API take it: :func:`create_schedule`'s arguments, with the run's memory
    thread and resource and its ``max_steps`` as fields of their own."""

    agent_id: str
    message: str | list[dict[str, Any]]
    cron: str | None = None
    every: str | None = None
    schedule_id: str | None = None
    time_zone: str | None = None
    jitter: str | None = None
    overlap: str = "skip"
    catchup_window: str | None = None
    paused: bool = False
    note: str | None = None
    thread: str | None = None
    resource: str | None = None
    max_steps: int | None = None

    async def create(self, app: SchedulingApp) -> AgentSchedule:
        """Create the schedule; a thread without a resource (or the other way round) is a ConfigurationError."""
        if (self.thread is None) != (self.resource is None):
            raise ConfigurationError("thread and resource go together: pass both or neither")
        options: dict[str, Any] = {}
        if self.thread is not None:
            options["memory"] = {"thread": self.thread, "resource": self.resource}
        if self.max_steps is not None:
            options["max_steps"] = self.max_steps
        return await create_schedule(
            app,
            self.agent_id,
            self.message,
            cron=self.cron,
            every=self.every,
            schedule_id=self.schedule_id,
            time_zone=self.time_zone,
            jitter=self.jitter,
            overlap=self.overlap,
            catchup_window=self.catchup_window,
            paused=self.paused,
            note=self.note,
            options=options,
        )


async def create_schedule(
    app: SchedulingApp,
    agent_id: str,
    message: MessageInput,
    *,
    cron: str | None = None,
    every: str | timedelta | None = None,
    schedule_id: str | None = None,
    time_zone: str | None = None,
    jitter: str | timedelta | None = None,
    overlap: str | ScheduleOverlapPolicy = "skip",
    catchup_window: str | timedelta | None = None,
    paused: bool = False,
    note: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> AgentSchedule:
    """Create a Temporal Schedule whose every action is a run of ``agent_id`` with ``message`` (see
    :meth:`App.schedule`)."""
    if (cron is None) == (every is None):
        raise ConfigurationError("a schedule needs exactly one of cron=... (e.g. '0 * * * *') or every=... ('1h')")
    run_options = dict(options or {})
    if run_options.get("run_id"):
        raise ConfigurationError(
            "a schedule's runs cannot share one run_id: each takes '<schedule id>-<scheduled time>'"
        )
    agent = app.agent(agent_id)
    run_input, attributes = app.prepare_run(agent, message, run_options)
    run_input = run_input.model_copy(update={"run_id": ""})
    schedule_id = schedule_id or f"{agent.id}-{uuid.uuid4().hex[:8]}"
    overlap_policy = _overlap(overlap)
    assert overlap_policy is not None
    spec = ScheduleSpec(
        cron_expressions=[cron] if cron is not None else [],
        intervals=[ScheduleIntervalSpec(every=parse_duration(every))] if every is not None else [],
        jitter=parse_duration(jitter) if jitter is not None else None,
        time_zone_name=time_zone,
    )
    action = ScheduleActionStartWorkflow(
        AgentRunWorkflow.run,
        run_input,
        id=schedule_id,
        task_queue=app.task_queue,
        task_timeout=workflow_task_timeout(agent),
        memo={SCHEDULE_MEMO: schedule_id},
        typed_search_attributes=TypedSearchAttributes(attributes),
    )
    handle = await app.client.create_schedule(
        schedule_id,
        Schedule(
            action=action,
            spec=spec,
            policy=SchedulePolicy(
                overlap=overlap_policy,
                catchup_window=parse_duration(catchup_window) if catchup_window is not None else None,
            ),
            state=ScheduleState(paused=paused, note=note),
        ),
        memo={AGENT_MEMO: agent.id, TASK_QUEUE_MEMO: app.task_queue, **({CRON_MEMO: cron} if cron else {})},
    )
    return AgentSchedule(handle)


async def list_schedules(app: SchedulingApp) -> list[ScheduleView]:
    """The App's schedules (runs of ``AgentRunWorkflow`` on its task queue), by id."""
    views: list[ScheduleView] = []
    async for listed in await app.client.list_schedules():
        action = listed.schedule.action if listed.schedule is not None else None
        if not isinstance(action, ScheduleListActionStartWorkflow) or action.workflow != AGENT_RUN_WORKFLOW:
            continue
        try:
            description = await app.client.get_schedule_handle(listed.id).describe()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:  # deleted since it was listed
                continue
            raise
        memo = await description.memo()
        if memo.get(TASK_QUEUE_MEMO) == app.task_queue:
            views.append(describe_view(description, memo))
    return sorted(views, key=lambda view: view.id)
