"""Inputs and results that cross the workflow boundary.

Kept small on purpose (DESIGN.md rule 2): transcripts and tool outputs live in the store and
travel by run id; these models carry ids, names, arguments, counters and usage.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from tempo_agents._wire import WireModel
from tempo_agents.models.messages import Message
from tempo_agents.models.model import ToolChoice
from tempo_agents.models.usage import Usage


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


class JournalRecord(WireModel):
    """A chunk the workflow knows of, written to the journal by the next activity that runs."""

    chunk: dict[str, Any]
    key: str | None = None


class StepFinishNote(WireModel):
    """What the workflow knows of a finished step; the next activity turns it into ``step-finish``."""

    step: int
    reason: str
    usage: Usage
    is_continued: bool


class CarriedState(WireModel):
    """The small state a run carries across continue-as-new."""

    step: int
    usage: Usage
    pending: list[JournalRecord] = Field(default_factory=list)
    previous_step: StepFinishNote | None = None


class RunInput(WireModel):
    """Input of :class:`AgentRunWorkflow`."""

    run_id: str
    agent_id: str
    messages: list[Message]
    options: RunOptions
    carried: CarriedState | None = None


class ToolCallRequest(WireModel):
    """A tool call the model made, with its parsed arguments."""

    tool_call_id: str
    tool_name: str
    args: Any = None


class ModelStepInput(WireModel):
    """Input of the model-step activity."""

    run_id: str
    agent_id: str
    step: int
    options: RunOptions
    new_messages: list[Message] = Field(default_factory=list)
    pending: list[JournalRecord] = Field(default_factory=list)
    previous_step: StepFinishNote | None = None


class ModelStepResult(WireModel):
    """What the workflow needs from a model step: the calls to run, why the model stopped, usage."""

    finish_reason: str
    usage: Usage
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)
    answered_calls: int = 0
    """Calls the step already answered with an error (unknown tool, unparseable arguments)."""


class ToolCallInput(WireModel):
    """Input of the tool-call activity."""

    run_id: str
    agent_id: str
    step: int
    call: ToolCallRequest
    options: RunOptions


class ToolCallResult(WireModel):
    """How a tool call ended; its output is in the journal and the transcript."""

    status: Literal["result", "error"]


class FinishInput(WireModel):
    """Input of the finish activity, which writes the last chunks and saves memory."""

    run_id: str
    agent_id: str
    options: RunOptions
    reason: str
    usage: Usage
    steps: int
    error: str | None = None
    pending: list[JournalRecord] = Field(default_factory=list)
    previous_step: StepFinishNote | None = None


class RunResult(WireModel):
    """What :class:`AgentRunWorkflow` returns."""

    run_id: str
    finish_reason: str
    usage: Usage
    steps: int
    error: str | None = None
