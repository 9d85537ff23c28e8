"""The model-step activity's boundary: what a step is given (new messages, the outbox, how to end the segment, what the
thread said while the run waited) and what the workflow needs back."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field, model_validator

from tempo_agents._wire import WireModel
from tempo_agents.budgets import BudgetStop
from tempo_agents.journal.outbox import JournalOutbox, legacy_outbox
from tempo_agents.models.messages import Message
from tempo_agents.models.usage import Usage
from tempo_agents.tasks import TaskItem
from tempo_agents.workflows.payloads.run_input import RunOptions
from tempo_agents.workflows.payloads.segment_close import SegmentClose
from tempo_agents.workflows.payloads.tool_calls import ToolCallRequest

__all__ = ["ModelStepInput", "ModelStepResult", "ThreadCatchUp"]


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
