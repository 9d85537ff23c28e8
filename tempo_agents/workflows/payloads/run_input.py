"""What starts a run: its input, its options (data only), its memory thread and fork origin, and the state it carries
across continue-as-new."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from tempo_agents._wire import WireModel
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.budgets import Budget
from tempo_agents.journal.outbox import JournalOutbox, legacy_outbox
from tempo_agents.models.messages import Message
from tempo_agents.models.model import ToolChoice
from tempo_agents.models.usage import Usage
from tempo_agents.tasks import TaskItem, TaskSignalState
from tempo_agents.workflows.payloads.answers import Answer
from tempo_agents.workflows.steering import SteerState

__all__ = ["CarriedState", "ForkOrigin", "MemoryRef", "RunInput", "RunOptions"]


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
