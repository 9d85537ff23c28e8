"""Inputs and results that cross the workflow boundary.

Kept small on purpose (ARCHITECTURE.md, "Durable-execution rules" 2): transcripts and tool outputs live in the store and
travel by run id; these models carry ids, names, arguments, counters and usage.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from tempo_agents._wire import WireModel
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.budgets.limits import Budget, BudgetStop
from tempo_agents.journal.outbox import JournalOutbox, JournalRecord, StepFinishNote, legacy_outbox
from tempo_agents.models.messages import Message
from tempo_agents.models.model import ToolChoice
from tempo_agents.models.usage import Usage
from tempo_agents.tasks import TaskItem, TaskSignalState
from tempo_agents.workflows.child_payloads import ChildOutcome, ChildStart
from tempo_agents.workflows.steering import SteerRequest, SteerState


class MemoryRef(WireModel):
    """The memory thread a run reads earlier messages from and adds its own to."""

    thread: str
    resource: str


class ForkOrigin(WireModel):
    """Where a fork comes from: a store reference (the run and the step), never the transcript itself.

    The fork's first model step copies the origin's transcript before ``step`` into its own; ``reuse="tools"``
    lets its tool calls answer from the origin's outcomes when tool and arguments match (``rerun`` names tools
    that run anyway).
    """

    model_config = ConfigDict(extra="forbid")

    run_id: str
    step: int = Field(ge=0)
    """The step the fork asks again, numbered as users see it: in the conversation, where a fork's steps copied from
    its own origin count (a fork at step k numbers its own steps k, k+1 ...)."""
    cut: int | None = Field(default=None, ge=0)
    """When the origin is itself a fork: the origin's own step (its store numbers its own steps from 0) the copy
    ends before. ``None``: ``step`` (an origin that is no fork, whose own steps are the conversation's)."""

    @model_serializer(mode="wrap")
    def _cut_only_when_set(self, serialize: SerializerFunctionWrapHandler) -> Any:
        """A fork of a run that is no fork carries no ``cut``: its input is the one it always was, which workers
        from before ``cut`` existed decode too."""
        data = serialize(self)
        if self.cut is None and isinstance(data, dict):
            data.pop("cut", None)
        return data

    reuse: Literal["none", "tools"] = "none"
    rerun: list[str] = Field(default_factory=list)
    replace_input: list[Message] | None = None
    """Messages that stand for the origin's input messages (the ones it started with)."""


class RunOptions(WireModel):
    """Per-run options. Everything here is data: code (hooks) is referred to by registered name."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(default=5, ge=1)
    tool_choice: ToolChoice = "auto"
    active_tools: list[str] | None = None
    request_context: dict[str, Any] = Field(default_factory=dict)
    memory: MemoryRef | None = None
    hooks: str | None = None
    model_settings: dict[str, Any] = Field(default_factory=dict)
    require_tool_approval: bool | str = False
    """``True`` for every call, or the name of an approval policy registered on the App."""
    auto_resume_suspended_tools: bool = False
    """Let the user's next message on the thread resume a suspended call (needs ``memory``)."""
    mode: str | None = None
    """The agent mode the run starts in (agents with modes; default: the agent's default mode)."""
    extra_instructions: str | None = None
    """Appended to the agent's instructions (a sub-agent's run, given ``instructions`` by its parent)."""
    fork: ForkOrigin | None = None
    """Set on a fork (``App.fork``): the run and step it was forked from."""
    budget: Budget | None = None
    """Limits on tokens and cost (the App's, the agent's and the run's merged); checked before each model step."""
    remind_every_seconds: float | None = Field(default=None, gt=0)
    """Reminders of this run's waiting calls whose tools set none (over the agent's)."""
    escalate_after_seconds: float | None = Field(default=None, gt=0)
    escalate_to: list[str] | None = None
    """The escalation of this run's waiting calls whose tools set none (over the agent's)."""
    waiting_holds_thread: bool = False
    """A run of a thread that waits only for people keeps the thread (later messages wait or are refused, as their
    strategy says); ``False``: it yields the thread, and goes on as the thread's next run once answered (README,
    "Threads")."""


MAX_CARRIED_ANSWERS = 100
"""How many answers a run carries across continue-as-new (its history stays small)."""


class Answer(WireModel):
    """One accepted answer to a waiting call, as the ``answers`` query lists it."""

    tool_call_id: str
    tool_name: str
    action: str
    answered_by: str | None = None
    answered_at: datetime | None = None
    data: Any = None
    """What was answered (a resume's data); ``None`` for approvals and declines."""
    reason: str | None = None
    """The reason given with a decline."""
    args: Any = None
    """The arguments an approver changed the call to (``None``: approved as the model made it)."""


class CarriedState(WireModel):
    """The small state a run carries across continue-as-new."""

    step: int
    usage: Usage
    segment: int = 0
    mode: str | None = None
    outbox: JournalOutbox = Field(default_factory=JournalOutbox)
    tasks: list[TaskItem] = Field(default_factory=list)
    task_signal_state: TaskSignalState | None = None
    state_signals: list[str] = Field(default_factory=list)
    projects_tasks: bool = False
    answers: list[Answer] = Field(default_factory=list)
    """The latest answers (``MAX_CARRIED_ANSWERS``), so the ``answers`` query outlives continue-as-new."""
    budget_waits: int = 0
    """How often the run waited for its budget (names the next wait)."""
    steers: SteerState | None = None
    """Steers received while the run's last step ran, for its next step (``None``: none were ever received)."""
    yielded_thread: bool = False
    """The run yielded its thread while it waited at some point: it tells the thread when it ends."""

    _legacy = model_validator(mode="before")(legacy_outbox)


class RunInput(WireModel):
    """Input of :class:`AgentRunWorkflow`."""

    run_id: str
    """The run's id, which is its workflow id; empty in a schedule's action, whose runs take the workflow id the
    schedule gives each of them."""
    agent_id: str
    messages: list[Message]
    options: RunOptions
    carried: CarriedState | None = None
    model_step_activity: ActivityOptions | None = None
    """The agent's model-step activity options (``None``: the defaults)."""


class ToolCallRequest(WireModel):
    """A tool call the model made, with its parsed arguments.

    ``index`` is its place among the step's calls; ``operation`` names the workflow-state built-in
    (``task_write`` …) that the workflow runs itself instead of an activity.
    """

    tool_call_id: str
    tool_name: str
    args: Any = None
    index: int = 0
    operation: str | None = None
    activity: ActivityOptions | None = None
    """The tool's activity options (``None``: the defaults)."""


class SegmentClose(WireModel):
    """How the activity that ends a journal segment writes its end: the ``step-finish`` of the step in
    progress, ``error`` when the run failed, the run's messages saved to memory, and ``finish``."""

    segment: int
    steps: int
    usage: Usage
    """The run's usage before the closing activity's own (a model step adds its step's)."""
    reason: str | None = None
    """The finish reason; ``None`` for a model step: its own finish reason."""
    step_finish: StepFinishNote | None = None
    error: str | None = None
    abandoned_step: int | None = None
    """A model step that failed for good: what its attempts streamed is dropped (``step-reset``)."""


class BatchClose(WireModel):
    """Given to each tool call of a step: the call that finds every call of the batch ended closes the
    segment when one of them suspended (``suspended``) or the run ends after them (``reason_if_done``)."""

    outcome_keys: list[str]
    """The saved-outcome keys of the batch's calls."""
    close: SegmentClose
    """``reason`` is unset: chosen by the outcomes."""
    reason_if_done: str | None = None
    suspended_elsewhere: bool = False
    """Calls of earlier batches still wait for a person."""


class ThreadCatchUp(WireModel):
    """A run that yielded its thread while it waited, going on: since when it waited, when it was answered."""

    waited_since: datetime
    answered_at: datetime


class ModelStepInput(WireModel):
    """Input of the model-step activity."""

    run_id: str
    agent_id: str
    step: int
    options: RunOptions
    new_messages: list[Message] = Field(default_factory=list)
    outbox: JournalOutbox = Field(default_factory=JournalOutbox)
    mode: str | None = None
    state_signals: list[str] = Field(default_factory=list)
    """Rendered state signals (task-list snapshot and deltas) shown to the model after the transcript."""
    close: SegmentClose | None = None
    """How to end the run's segment when the model calls no tool (the run is done)."""
    now: datetime | None = None
    """The workflow's time when it started the step: the budget's day and month are this time's (``None``:
    the activity's clock, for steps scheduled before budgets)."""
    budget_waits: int = 0
    """How often the run waited for its budget to be raised: names the next wait (``budget-<step>-<n>``)."""
    budget_answered: str | None = None
    """The budget wait an answer ended just now: the step removes it from the store's waiting calls."""
    catch_up: ThreadCatchUp | None = None
    """The run yielded its thread while it waited and goes on now: the step first shows the model what was said on
    the thread meanwhile."""

    _legacy = model_validator(mode="before")(legacy_outbox)


class ModelStepResult(WireModel):
    """What the workflow needs from a model step: the calls to run, why the model stopped, usage."""

    finish_reason: str
    usage: Usage
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)
    answered_calls: int = 0
    """Calls the step already answered with an error (unknown tool, unparseable arguments)."""
    thread_tasks: list[TaskItem] | None = None
    """On a run's first step: the task list its memory thread carries from earlier runs."""
    projects_tasks: bool = False
    """Whether the agent shows the task list to the model (it has a TaskSignalProvider)."""
    closed_segment: bool = False
    """The step ended the segment (``close`` of the input was used)."""
    budget_stop: BudgetStop | None = None
    """A budget limit was reached: the model was not called (``finish_reason`` is ``budget-exceeded``)."""


class Resolution(WireModel):
    """How a suspended call or an approval request is answered."""

    action: Literal["resume", "approve", "decline", "expire", "handoff"]
    data: Any = None
    reason: str | None = None
    expired: bool = False
    answered_by: str | None = None
    """The principal that answered (the HTTP API's token name), when known."""
    answered_by_groups: list[str] | None = None
    """The groups of ``answered_by``, passed on with the answer to a child run whose call this one stands for."""
    args: Any = None
    """Approved with changed arguments: the arguments the call runs with (``None``: as the model made it)."""
    args_before: Any = None
    """Approved with changed arguments: the arguments the model made, for the journal's record of the change."""


class ToolCallInput(WireModel):
    """Input of the tool-call activity. ``round`` counts how often the call was resumed."""

    run_id: str
    agent_id: str
    step: int
    call: ToolCallRequest
    options: RunOptions
    round: int = 0
    refusals: int = 0
    """How many answers of this round its tool refused before (``resume-rejected``): the call's keys differ from
    theirs, so this answer is not mistaken for a refused one."""
    resolution: Resolution | None = None
    suspend_payload: Any = None
    input_snapshot: Any = None
    mode: str | None = None
    outbox: JournalOutbox = Field(default_factory=JournalOutbox)
    batch: BatchClose | None = None


class Suspension(WireModel):
    """A call that stopped to wait for a person."""

    kind: Literal["suspension", "approval"]
    tool_id: str | None = None
    suspend_payload: Any = None
    resume_schema: str = ""
    input_snapshot: Any = None
    expires_in_seconds: float | None = None
    remind_every_seconds: float | None = None
    """Re-send the waiting call's notification every so often (workflow time)."""
    escalate_after_seconds: float | None = None
    """Re-address the call to ``escalate_to`` once it has waited this long."""
    escalate_to: list[str] | None = None
    approvers: list[str] = Field(default_factory=list)
    """Who may answer (principals, ``group:<name>``); empty: anyone. Computed by the activity (a policy is user
    code), kept by the workflow with the waiting call."""
    args_schema: str = ""
    """An approval: the tool's input JSON schema, which edited arguments must match (``{}``: any arguments; empty:
    its arguments cannot be changed, as for a call that waits for its child's approval)."""


class ToolCallResult(WireModel):
    """How a tool call ended; its output is in the journal and the transcript."""

    status: Literal["result", "error", "suspended", "resume-rejected", "delegate"]
    suspension: Suspension | None = None
    child: ChildStart | None = None
    """``delegate``: the call goes on as this child workflow (``agent-<key>``, ``workflow-<key>``)."""
    message: str | None = None
    switch_mode_to: str | None = None
    """The mode the tool moved the run to (``submit_plan`` approved)."""
    closed_segment: bool = False
    """This call found its batch ended and wrote the end of the segment."""


class PendingCall(WireModel):
    """A suspended call or approval request of a waiting run, as the ``pending`` query shows it."""

    tool_call_id: str
    tool_name: str
    tool_id: str | None = None
    args: Any = None
    suspend_payload: Any = None
    requires_approval: bool = False
    resume_schema: str = ""
    """The JSON schema resume data must match (a JSON string; empty: anything goes)."""
    suspended_at: datetime
    expires_at: datetime | None = None
    round: int = 0
    step: int = 0
    index: int = 0
    input_snapshot: Any = None
    approvers: list[str] = Field(default_factory=list)
    """Who may answer: principals, or ``group:<name>`` for a group; empty: anyone may answer."""
    args_schema: str = ""
    """An approval: the tool's input JSON schema (a JSON string), which arguments changed by an approver must
    match (``{}``: any arguments); empty: its arguments cannot be changed (a call waiting for its child's approval,
    an approval journaled before changes were possible)."""
    remind_every_seconds: float | None = None
    escalate_after_seconds: float | None = None
    escalate_to: list[str] | None = None
    escalated: bool | None = None
    """``True`` once the call was re-addressed to ``escalate_to`` (its ``approvers`` now); unset before."""

    @classmethod
    def of(cls, call_input: ToolCallInput, suspension: Suspension, suspended_at: datetime, round: int) -> PendingCall:
        """The call ``call_input`` made, waiting in ``round`` as ``suspension`` says since ``suspended_at``: the same
        view for the workflow's ``pending`` query and the store's list of waiting calls."""
        call = call_input.call
        expires = suspension.expires_in_seconds
        return cls(
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            tool_id=suspension.tool_id,
            args=call.args,
            suspend_payload=suspension.suspend_payload,
            requires_approval=suspension.kind == "approval",
            resume_schema=suspension.resume_schema,
            suspended_at=suspended_at,
            expires_at=None if expires is None else suspended_at + timedelta(seconds=expires),
            round=round,
            step=call_input.step,
            index=call.index,
            input_snapshot=suspension.input_snapshot,
            remind_every_seconds=suspension.remind_every_seconds,
            escalate_after_seconds=suspension.escalate_after_seconds,
            escalate_to=suspension.escalate_to,
            approvers=list(suspension.approvers),
            args_schema=suspension.args_schema,
        )

    def reminder_at(self, sent: int) -> datetime | None:
        """When reminder ``sent + 1`` is due (``None``: no reminders)."""
        if self.remind_every_seconds is None:
            return None
        return self.suspended_at + timedelta(seconds=self.remind_every_seconds * (sent + 1))

    def escalation_at(self) -> datetime | None:
        """When the call is re-addressed (``None``: never, or it was already)."""
        if self.escalate_after_seconds is None or self.escalated or not self.escalate_to:
            return None
        return self.suspended_at + timedelta(seconds=self.escalate_after_seconds)


class ResumeRequest(WireModel):
    """The ``resume`` update and signal: answer one pending call (or the only one)."""

    tool_call_id: str | None = None
    action: Literal["resume", "approve", "decline", "handoff"] = "resume"
    data: Any = None
    reason: str | None = None
    agent_id: str | None = None
    """When set, the run must belong to this agent."""
    answered_by: str | None = None
    """Who answers (a principal name): kept with the answer and shown as ``answeredBy`` in its chunk."""
    answered_by_groups: list[str] = Field(default_factory=list)
    """The groups ``answered_by`` belongs to, resolved where the principal is known (the server's tokens, the
    App's groups); a call assigned to ``group:<name>`` may be answered by its members."""
    args: Any = None
    """An approval with changed arguments: the call runs with exactly these (checked against the tool's input
    schema); ``None``: as the model made them."""
    round: int | None = None
    """When set, the answer is for this round of the call only (an answer link is bound to one round)."""


class BudgetAnswer(WireModel):
    """The ``budget`` update: a person's answer to a run that waits for its budget to be raised."""

    action: Literal["raise", "end"]
    budget: Budget | None = None
    """``raise``: the run's budget from now on (it replaces the run's; give every limit it should keep)."""
    answered_by: str | None = None


class BudgetWait(WireModel):
    """What a run waiting for its budget shows (the ``budget`` query): the limit reached and the wait's id."""

    stop: BudgetStop
    since: datetime


class BudgetState(WireModel):
    """The ``budget`` query: the run's budget, its memory (whose thread and resource it counts under) and
    the wait for a person, if any."""

    budget: Budget | None
    thread: str | None = None
    resource: str | None = None
    waiting: BudgetWait | None = None


class ResumeAccepted(WireModel):
    """The ``resume`` update's result: the call it answered and the chunk the resumed stream follows."""

    tool_call_id: str
    after_key: str


class FinishInput(WireModel):
    """Input of the finish activity: ends a segment when no other activity could (an error, a cancelled
    run, parallel calls whose last one was lost)."""

    run_id: str
    agent_id: str
    options: RunOptions
    close: SegmentClose
    outbox: JournalOutbox = Field(default_factory=JournalOutbox)

    @model_validator(mode="before")
    @classmethod
    def _legacy_fields(cls, data: Any) -> Any:
        data = legacy_outbox(data)
        if isinstance(data, dict) and "close" not in data and "reason" in data:
            data = dict(data)
            data["close"] = {
                "segment": data.pop("segment", 0),
                "steps": data.pop("steps", 0),
                "usage": data.pop("usage", {}),
                "reason": data.pop("reason"),
                "error": data.pop("error", None),
                "stepFinish": data["outbox"].pop("stepFinish", None),
            }
        return data


class HandoffRequest(WireModel):
    """The ``handoff`` update: a later run of the thread takes over a suspended call of this tool."""

    tool_name: str
    by_run_id: str


class HandoffAccepted(WireModel):
    """The ``handoff`` update's result: what the run that takes over the call needs to execute it."""

    tool_call_id: str
    tool_name: str
    args: Any = None
    suspend_payload: Any = None
    input_snapshot: Any = None


class RunResult(WireModel):
    """What :class:`AgentRunWorkflow` returns."""

    run_id: str
    finish_reason: str
    usage: Usage
    steps: int
    error: str | None = None
    undelivered_steers: list[SteerRequest] = Field(default_factory=list)
    """Steers the run received but ended without showing to the model (it took no further step): whoever sent them
    starts a new run with them."""


class CallAlarm(WireModel):
    """A waiting call's reminder came due, or it was escalated: the journal activity notifies about it."""

    kind: Literal["reminder", "escalated"]
    call: PendingCall
    reminder: int = 0
    """Which reminder (1, 2, ...)."""


class JournalInput(WireModel):
    """Input of the journal local activity: chunks a waiting run must show at once (a refused signal, a
    reminder, an escalation), and the alarms to notify about."""

    run_id: str
    records: list[JournalRecord]
    agent_id: str | None = None
    alarms: list[CallAlarm] = Field(default_factory=list)


class ChildRelayInput(WireModel):
    """Input of the child-relay activity: the parent's call, its child, and where the relay takes over.

    For a sub-agent, the relay copies the child's journal into the parent's (from ``cursor``) until a
    segment of the child ends; for a workflow tool it records ``outcome``.
    """

    call: ToolCallInput
    start: ChildStart
    cursor: int = 0
    outcome: ChildOutcome | None = None


class ChildRelayResult(WireModel):
    """How the relay left the call, and where the next relay of the same child takes over."""

    result: ToolCallResult
    cursor: int = 0
    child_tool_call_id: str | None = None
    """The child's waiting call the parent's suspension stands for."""


class RunSnapshot(WireModel):
    """Every figure a run page shows, answered by one query (a closed run is replayed once, not once a figure)."""

    status: str
    mode: str | None
    steps: int
    usage: Usage
    pending: list[PendingCall]
    tasks: list[TaskItem]
    answers: list[Answer] | None
    """``None`` only when a worker from before the ``answers`` query was asked figure by figure."""
    budget: BudgetState | None = None
    """``None`` only when a worker from before budgets answered."""
