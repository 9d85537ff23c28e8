"""Inputs and results that cross the workflow boundary.

Kept small on purpose (DESIGN.md rule 2): transcripts and tool outputs live in the store and
travel by run id; these models carry ids, names, arguments, counters and usage.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from tempo_agents._wire import WireModel
from tempo_agents.models.messages import Message
from tempo_agents.models.model import ToolChoice
from tempo_agents.models.usage import Usage
from tempo_agents.tools.builtin.task_list import TaskItem
from tempo_agents.tools.builtin.task_signals import TaskSignalState


class MemoryRef(WireModel):
    """The memory thread a run reads earlier messages from and adds its own to."""

    thread: str
    resource: str


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


class JournalRecord(WireModel):
    """A chunk the workflow knows of, written to the journal by the next activity that runs."""

    chunk: dict[str, Any]
    key: str | None = None


class TranscriptRecord(WireModel):
    """A transcript entry the workflow produced (an in-workflow tool's result), stored by the next activity."""

    step: int
    part: str
    position: int
    message: dict[str, Any]


class ThreadStateRecord(WireModel):
    """A thread-state value the workflow changed (the task list), stored by the next activity."""

    thread_id: str
    type: str
    value: Any = None


class WorkflowWrites(WireModel):
    """Store writes only the workflow knows of (besides journal chunks); the next activity makes them first."""

    transcript: list[TranscriptRecord] = Field(default_factory=list)

    thread_state: list[ThreadStateRecord] = Field(default_factory=list)


class StepFinishNote(WireModel):
    """What the workflow knows of a finished step; the next activity turns it into ``step-finish``."""

    step: int
    reason: str
    usage: Usage
    is_continued: bool
    segment: int = 0


class CarriedState(WireModel):
    """The small state a run carries across continue-as-new."""

    step: int
    usage: Usage
    segment: int = 0
    mode: str | None = None
    pending: list[JournalRecord] = Field(default_factory=list)
    previous_step: StepFinishNote | None = None
    tasks: list[TaskItem] = Field(default_factory=list)
    task_signal_state: TaskSignalState | None = None
    state_signals: list[str] = Field(default_factory=list)
    projects_tasks: bool = False
    writes: WorkflowWrites = Field(default_factory=WorkflowWrites)


class RunInput(WireModel):
    """Input of :class:`AgentRunWorkflow`."""

    run_id: str
    agent_id: str
    messages: list[Message]
    options: RunOptions
    carried: CarriedState | None = None


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


class ModelStepInput(WireModel):
    """Input of the model-step activity."""

    run_id: str
    agent_id: str
    step: int
    options: RunOptions
    new_messages: list[Message] = Field(default_factory=list)
    pending: list[JournalRecord] = Field(default_factory=list)
    previous_step: StepFinishNote | None = None
    mode: str | None = None
    writes: WorkflowWrites = Field(default_factory=WorkflowWrites)
    state_signals: list[str] = Field(default_factory=list)
    """Rendered state signals (task-list snapshot and deltas) shown to the model after the transcript."""


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


class Resolution(WireModel):
    """How a suspended call or an approval request is answered."""

    action: Literal["resume", "approve", "decline", "expire", "handoff"]
    data: Any = None
    reason: str | None = None
    expired: bool = False


class ToolCallInput(WireModel):
    """Input of the tool-call activity. ``round`` counts how often the call was resumed."""

    run_id: str
    agent_id: str
    step: int
    call: ToolCallRequest
    options: RunOptions
    round: int = 0
    resolution: Resolution | None = None
    suspend_payload: Any = None
    input_snapshot: Any = None
    mode: str | None = None


class Suspension(WireModel):
    """A call that stopped to wait for a person."""

    kind: Literal["suspension", "approval"]
    suspend_payload: Any = None
    resume_schema: str = ""
    input_snapshot: Any = None
    expires_in_seconds: float | None = None


class ToolCallResult(WireModel):
    """How a tool call ended; its output is in the journal and the transcript."""

    status: Literal["result", "error", "suspended", "resume-rejected"]
    suspension: Suspension | None = None
    message: str | None = None
    switch_mode_to: str | None = None
    """The mode the tool moved the run to (``submit_plan`` approved)."""


class PendingCall(WireModel):
    """A suspended call or approval request of a waiting run, as the ``pending`` query shows it."""

    tool_call_id: str
    tool_name: str
    args: Any = None
    suspend_payload: Any = None
    requires_approval: bool = False
    resume_schema: str = ""
    suspended_at: datetime
    expires_at: datetime | None = None
    round: int = 0
    step: int = 0
    index: int = 0
    input_snapshot: Any = None


class ResumeRequest(WireModel):
    """The ``resume`` update and signal: answer one pending call (or the only one)."""

    tool_call_id: str | None = None
    action: Literal["resume", "approve", "decline", "handoff"] = "resume"
    data: Any = None
    reason: str | None = None


class ResumeAccepted(WireModel):
    """The ``resume`` update's result: the call it answered and the chunk the resumed stream follows."""

    tool_call_id: str
    after_key: str


class FinishInput(WireModel):
    """Input of the finish activity, which writes the last chunks of a segment and saves memory."""

    run_id: str
    agent_id: str
    options: RunOptions
    reason: str
    usage: Usage
    steps: int
    segment: int = 0
    error: str | None = None
    pending: list[JournalRecord] = Field(default_factory=list)
    previous_step: StepFinishNote | None = None
    writes: WorkflowWrites = Field(default_factory=WorkflowWrites)


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


class JournalInput(WireModel):
    """Input of the journal local activity: chunks only the workflow knows of."""

    run_id: str
    records: list[JournalRecord]
