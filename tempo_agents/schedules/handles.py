"""Schedules: runs of an agent started by a Temporal Schedule, each an ordinary run of ``AgentRunWorkflow``.

The schedule's action starts the workflow with a :class:`RunInput` whose ``run_id`` is empty: Temporal gives every
scheduled start the workflow id ``<schedule id>-<scheduled time>``, and the workflow takes that as its run id. That
name is what keeps a due time (or a backfilled one) to one run, but Temporal names a trigger by the second it was
sent, so two triggers in one second would be one name: a trigger of an ``allow_all`` schedule is therefore started
here, as ``<schedule id>-<time>-<8 hex>`` from the schedule's current action (see :meth:`AgentSchedule.trigger`).
Each run carries the memo ``{"schedule": <schedule id>}`` and the ``TemporalScheduledById`` search attribute, and
the schedule's own memo names the agent and the App's task queue, which is how an App finds its schedules.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
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
    ScheduleUpdate,
    ScheduleUpdateInput,
    WorkflowExecutionStatus,
)
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDReusePolicy,
)
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents._wire import WireModel
from tempo_agents.agent.agent import Agent
from tempo_agents.agent.local_activities import workflow_task_timeout
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import MessageInput, TextPart
from tempo_agents.schedules.cron import calendar_cron
from tempo_agents.schedules.listing import until_listed
from tempo_agents.schedules.requests import SCHEDULE_CHANGE_KEYS, check_numbers
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import RunInput, RunOptions

__all__ = [
    "OVERLAP_POLICIES",
    "SCHEDULED_BY",
    "SCHEDULE_MEMO",
    "AgentSchedule",
    "BackfillOverlapError",
    "ScheduleView",
    "ScheduledRun",
    "SchedulingApp",
    "TriggeredRun",
    "create_schedule",
    "list_schedules",
    "parse_duration",
    "trigger_run_id",
]

SCHEDULE_MEMO = "schedule"
"""The memo key of a scheduled run: the id of the schedule that started it."""
SCHEDULED_BY = SearchAttributeKey.for_keyword("TemporalScheduledById")
"""The search attribute Temporal gives every run a schedule started (and a trigger here gives its run): the
schedule's id."""
SCHEDULED_START = SearchAttributeKey.for_datetime("TemporalScheduledStartTime")
"""The due time Temporal gives the runs it starts; a run a trigger started here has none."""
AGENT_MEMO = "tempoAgentId"
TASK_QUEUE_MEMO = "tempoAgentsTaskQueue"

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


def _every(value: str | timedelta) -> timedelta:
    every = parse_duration(value)
    if every < timedelta(seconds=1):
        # Temporal names a scheduled run by its second: two due times in one second would be one run.
        raise ConfigurationError(f'a schedule runs at most once a second: every="{value}" is shorter')
    return every


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


class TriggeredRun(WireModel):
    """What a trigger did: ``started`` with ``run_id`` when the run was started by the trigger itself (an
    ``allow_all`` trigger, whatever else runs), else handed to the schedule, whose overlap policy decides whether
    and when a run starts (``started`` is then ``None``: not known when the trigger is answered)."""

    schedule_id: str
    overlap: str
    started: bool | None
    run_id: str | None = None


class ScheduleView(WireModel):
    """A schedule as a user sees it: when it runs, what each run is, its state, its next and its recent runs."""

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
    message: str | None = None
    """The text of the runs' user message."""
    options: dict[str, Any] = Field(default_factory=dict)
    """The runs' options that differ from a run's defaults (camelCase, as the HTTP API takes them)."""
    runs_started: int = 0
    next_runs: list[datetime] = Field(default_factory=list)
    """The next times it is due (up to 10), earliest first."""
    recent_runs: list[ScheduledRun] = Field(default_factory=list)
    """Its latest runs (up to 10), oldest first: the ones it started and the ones triggers started."""
    running: list[str] = Field(default_factory=list)
    """The run ids of its runs that have not closed."""
    created_at: datetime | None = None
    updated_at: datetime | None = None


RECENT_RUNS = 10

_DEFAULT_OPTIONS = RunOptions().model_dump(mode="json", by_alias=True, exclude_none=True)


async def _action_input(client: Client, action: ScheduleActionStartWorkflow) -> RunInput:
    """The run input of a schedule's action, as described (its arguments come back undecoded)."""
    raw = action.args[0] if action.args else None
    if isinstance(raw, RunInput):
        return raw
    [decoded] = await client.data_converter.decode([raw], [RunInput])  # type: ignore[list-item]
    assert isinstance(decoded, RunInput)
    return decoded


def _message_text(run_input: RunInput) -> str | None:
    texts = [part.text for message in run_input.messages for part in message.content if isinstance(part, TextPart)]
    return "\n".join(texts) if texts else None


async def _triggered_runs(client: Client, schedule_id: str) -> tuple[list[ScheduledRun], list[str], int]:
    """The latest runs triggers started (Temporal's own list holds only the runs the schedule started), the ones of
    them still running, and how many there are."""
    query = f"{SCHEDULED_BY.name} = '{schedule_id}' AND {SCHEDULED_START.name} IS NULL"
    runs: list[ScheduledRun] = []
    running: list[str] = []
    async for execution in client.list_workflows(query, limit=RECENT_RUNS):
        runs.append(
            ScheduledRun(run_id=execution.id, scheduled_at=execution.start_time, started_at=execution.start_time)
        )
        if execution.status == WorkflowExecutionStatus.RUNNING:
            running.append(execution.id)
    count = (await client.count_workflows(query)).count if len(runs) == RECENT_RUNS else len(runs)
    return runs, running, count


async def describe_view(client: Client, description: ScheduleDescription, memo: Mapping[str, Any]) -> ScheduleView:
    """A :class:`ScheduleView` of a described schedule (its memo already read)."""
    schedule = description.schedule
    spec = schedule.spec
    info = description.info
    message: str | None = None
    options: dict[str, Any] = {}
    if isinstance(schedule.action, ScheduleActionStartWorkflow):
        run_input = await _action_input(client, schedule.action)
        message = _message_text(run_input)
        options = {
            key: value
            for key, value in run_input.options.model_dump(mode="json", by_alias=True, exclude_none=True).items()
            if value != _DEFAULT_OPTIONS.get(key)
        }
    started = [
        ScheduledRun(run_id=result.action.workflow_id, scheduled_at=result.scheduled_at, started_at=result.started_at)
        for result in info.recent_actions
        if isinstance(result.action, ScheduleActionExecutionStartWorkflow)
    ]
    triggered, triggered_running, triggered_count = await _triggered_runs(client, description.id)
    recent = sorted([*started, *triggered], key=lambda run: run.started_at)[-RECENT_RUNS:]
    return ScheduleView(
        id=description.id,
        agent_id=memo.get(AGENT_MEMO),
        cron=[calendar_cron(calendar) for calendar in spec.calendars] + list(spec.cron_expressions),
        every_seconds=[interval.every.total_seconds() for interval in spec.intervals],
        time_zone=spec.time_zone_name,
        jitter_seconds=spec.jitter.total_seconds() if spec.jitter is not None else None,
        overlap=_overlap_name(schedule.policy.overlap),
        catchup_window_seconds=(
            schedule.policy.catchup_window.total_seconds() if schedule.policy.catchup_window is not None else None
        ),
        paused=schedule.state.paused,
        note=schedule.state.note,
        message=message,
        options=options,
        runs_started=info.num_actions + triggered_count,
        next_runs=list(info.next_action_times),
        recent_runs=recent,
        running=[
            execution.workflow_id
            for execution in info.running_actions
            if isinstance(execution, ScheduleActionExecutionStartWorkflow)
        ]
        + triggered_running,
        created_at=info.created_at,
        updated_at=info.last_updated_at,
    )


class BackfillOverlapError(ConfigurationError):
    """A backfill of a period in which the schedule already has runs."""

    code = "SCHEDULE_BACKFILL_OVERLAP"


def _rfc3339(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def trigger_run_id(schedule_id: str, at: datetime) -> str:
    """A triggered run's id: the schedule's, the time to the second (as Temporal writes a scheduled run's) and 8
    random hex digits, so that triggers in one second are runs of their own and never a scheduled run's name."""
    return f"{schedule_id}-{at.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}-{uuid.uuid4().hex[:8]}"


class AgentSchedule:
    """A handle on one schedule of an App (``await app.schedule(...)`` or ``app.get_schedule(id)``)."""

    def __init__(self, app: SchedulingApp, handle: ScheduleHandle) -> None:
        self.app = app
        self.handle = handle
        self.id = handle.id

    async def describe(self) -> ScheduleView:
        """The schedule now: spec, state, what its runs are, next and recent runs."""
        description = await self.handle.describe()
        return await describe_view(self.app.client, description, await description.memo())

    async def pause(self, note: str | None = None) -> None:
        """Start no more runs until :meth:`unpause` (runs already started go on)."""
        await self.handle.pause(note=note)

    async def unpause(self, note: str | None = None) -> None:
        await self.handle.unpause(note=note)

    async def trigger(self, *, overlap: str | ScheduleOverlapPolicy | None = None) -> TriggeredRun:
        """Start a run now, whatever the spec says (the schedule's overlap policy applies unless ``overlap``).

        Under ``allow_all`` every trigger is a run of its own, started here from the schedule's current action with
        the id :func:`trigger_run_id` gives (Temporal would name two triggers of one second alike, and start one);
        the answer names it. Under any other policy the schedule decides, as its policy says (skip it while a run
        is open, buffer it, or stop the open one first): the answer says so, with no run id.
        """
        description = await self.handle.describe()
        policy = _overlap(overlap) or description.schedule.policy.overlap
        action = description.schedule.action
        if policy != ScheduleOverlapPolicy.ALLOW_ALL or not isinstance(action, ScheduleActionStartWorkflow):
            await self.handle.trigger(overlap=policy)
            return TriggeredRun(schedule_id=self.id, overlap=_overlap_name(policy), started=None)
        run_input = await _action_input(self.app.client, action)
        run_id = trigger_run_id(self.id, datetime.now(UTC))
        attributes = [*action.typed_search_attributes, SearchAttributePair(SCHEDULED_BY, self.id)]
        await self.app.client.start_workflow(
            AgentRunWorkflow.run,
            run_input,
            id=run_id,
            task_queue=action.task_queue,
            task_timeout=action.task_timeout,
            memo={SCHEDULE_MEMO: self.id},
            search_attributes=TypedSearchAttributes(attributes),
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        )
        return TriggeredRun(schedule_id=self.id, overlap="allow_all", started=True, run_id=run_id)

    async def backfill(
        self, start_at: datetime, end_at: datetime, *, overlap: str | ScheduleOverlapPolicy | None = None
    ) -> None:
        """Start the runs that were due between ``start_at`` and ``end_at`` (both included), as if the schedule had
        run then: one run per due time, named by it.

        A period in which the schedule already has runs is refused (:class:`BackfillOverlapError`, naming them):
        Temporal would start those due times again under the same names, and a run's name is its journal's.
        """
        if start_at.tzinfo is None or end_at.tzinfo is None:
            raise ConfigurationError("a backfill's start and end need a time zone (e.g. 2026-11-02T08:00:00Z)")
        if end_at < start_at:
            raise ConfigurationError("a backfill's end is before its start")
        policy = _overlap(overlap)
        query = (
            f"{SCHEDULED_BY.name} = '{self.id}' AND {SCHEDULED_START.name} >= '{_rfc3339(start_at)}'"
            f" AND {SCHEDULED_START.name} < '{_rfc3339(end_at + timedelta(seconds=1))}'"
        )
        existing = [execution.id async for execution in self.app.client.list_workflows(query, limit=5)]
        if existing:
            raise BackfillOverlapError(
                f"schedule {self.id} already has runs due in that period ({', '.join(sorted(existing))}): a "
                "backfill starts each due time once, so choose a period without them"
            )
        await self.handle.backfill(ScheduleBackfill(start_at=start_at, end_at=end_at, overlap=policy))

    async def update(self, **changes: Any) -> ScheduleView:
        """Change the schedule in place; what is not named stays as it is, and so do its recent runs, its count of
        runs and its id.

        ``message``; when it runs: ``cron`` or ``every`` (either replaces the other), ``time_zone``, ``jitter``;
        ``overlap``, ``catchup_window``; ``note``, ``paused``; and any run option ``App.schedule`` takes
        (``memory``, ``max_steps``, ``budget`` ...), over the runs' current options (``None`` clears one). Checked
        as at creation: a ConfigurationError names what is wrong, before anything changes.
        """
        plan = await _UpdatePlan.checked(self.app, self.handle, changes)
        await self.handle.update(plan.apply)
        return await self.describe()

    async def delete(self) -> None:
        """Delete the schedule (its runs, started or closed, stay as they are)."""
        await self.handle.delete()


_NOT_OPTIONS = frozenset({"run_id", "fork", "thread_strategy"})


class _UpdatePlan:
    """An update checked against the schedule as it was described, applied by ``ScheduleHandle.update`` to the
    schedule as the server has it then."""

    def __init__(self, app: SchedulingApp, changes: Mapping[str, Any]) -> None:
        self.app = app
        self.changes = changes

    @classmethod
    async def checked(cls, app: SchedulingApp, handle: ScheduleHandle, changes: Mapping[str, Any]) -> _UpdatePlan:
        plan = cls(app, changes)
        described = await handle.describe()
        plan.build(described.schedule, await _describe_input(app, described.schedule))  # raises before any change
        return plan

    async def apply(self, update: ScheduleUpdateInput) -> ScheduleUpdate:
        schedule = update.description.schedule
        return ScheduleUpdate(schedule=self.build(schedule, await _describe_input(self.app, schedule)))

    def build(self, schedule: Schedule, current: RunInput | None) -> Schedule:
        changes = dict(self.changes)
        spec, policy, state = schedule.spec, schedule.policy, schedule.state
        if "cron" in changes or "every" in changes:
            cron, every = changes.get("cron"), changes.get("every")
            if (cron is None) == (every is None):
                raise ConfigurationError(
                    "a schedule needs exactly one of cron=... (e.g. '0 * * * *') or every=... ('1h')"
                )
            spec.cron_expressions = [cron] if cron is not None else []
            spec.calendars = []
            spec.intervals = [ScheduleIntervalSpec(every=_every(every))] if every is not None else []
        if "time_zone" in changes:
            spec.time_zone_name = changes["time_zone"]
        if "jitter" in changes:
            spec.jitter = parse_duration(changes["jitter"]) if changes["jitter"] is not None else None
        if "overlap" in changes:
            overlap = _overlap(changes["overlap"])
            if overlap is None:
                raise ConfigurationError("overlap cannot be removed: name a policy (skip by default)")
            policy.overlap = overlap
        if "catchup_window" in changes:
            window = changes["catchup_window"]
            policy.catchup_window = parse_duration(window) if window is not None else None
        if "note" in changes:
            state.note = changes["note"]
        if "paused" in changes:
            if not isinstance(changes["paused"], bool):
                raise ConfigurationError("paused is true or false")
            state.paused = changes["paused"]
        options = {key: value for key, value in changes.items() if key not in SCHEDULE_CHANGE_KEYS}
        if "message" in changes or options:
            schedule.action = self._action(schedule, current, changes, options)
        return schedule

    def _action(
        self, schedule: Schedule, current: RunInput | None, changes: Mapping[str, Any], options: dict[str, Any]
    ) -> ScheduleActionStartWorkflow:
        action = schedule.action
        if not isinstance(action, ScheduleActionStartWorkflow) or current is None:
            raise ConfigurationError("this schedule does not start agent runs: its action cannot be changed here")
        named = sorted(set(options) & _NOT_OPTIONS)
        if named:
            raise ConfigurationError(f"a schedule's runs cannot take {', '.join(named)}")
        check_numbers(options)
        if "message" in changes and not changes["message"]:
            raise ConfigurationError("a schedule's runs need a message")
        agent = self.app.agent(current.agent_id)
        merged = current.options.model_dump(exclude_none=True, exclude={"fork"})
        for key, value in options.items():
            if value is None:  # cleared: the agent's (or the run's) default again
                merged.pop(key, None)
            else:
                merged[key] = value
        messages = changes.get("message") or current.messages
        run_input, attributes = self.app.prepare_run(agent, messages, merged)
        return ScheduleActionStartWorkflow(
            AgentRunWorkflow.run,
            run_input.model_copy(update={"run_id": ""}),
            id=action.id,
            task_queue=action.task_queue,
            task_timeout=workflow_task_timeout(agent),
            memo={SCHEDULE_MEMO: action.id},
            typed_search_attributes=TypedSearchAttributes(attributes),
        )


async def _describe_input(app: SchedulingApp, schedule: Schedule) -> RunInput | None:
    if not isinstance(schedule.action, ScheduleActionStartWorkflow):
        return None
    return await _action_input(app.client, schedule.action)


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
    named = sorted(set(run_options) & (_NOT_OPTIONS - {"run_id"}))
    if named:
        raise ConfigurationError(f"a schedule's runs cannot take {', '.join(named)}")
    check_numbers(run_options)
    agent = app.agent(agent_id)
    run_input, attributes = app.prepare_run(agent, message, run_options)
    run_input = run_input.model_copy(update={"run_id": ""})
    schedule_id = schedule_id or f"{agent.id}-{uuid.uuid4().hex[:8]}"
    overlap_policy = _overlap(overlap)
    assert overlap_policy is not None
    spec = ScheduleSpec(
        cron_expressions=[cron] if cron is not None else [],
        intervals=[ScheduleIntervalSpec(every=_every(every))] if every is not None else [],
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
        memo={AGENT_MEMO: agent.id, TASK_QUEUE_MEMO: app.task_queue},
    )
    await until_listed(app.client, schedule_id)
    return AgentSchedule(app, handle)


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
            views.append(await describe_view(app.client, description, memo))
    return sorted(views, key=lambda view: view.id)
