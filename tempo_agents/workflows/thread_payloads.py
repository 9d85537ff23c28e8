"""What crosses the boundary of a thread's workflow (``ThreadWorkflow``): the runs it starts, the messages sent to
it, what happened to each, and the thread as it stands."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import Field

from tempo_agents._wire import WireModel
from tempo_agents.deprecations import moved_name
from tempo_agents.workflows.payloads import RunInput

__all__ = [
    "CANCEL_QUEUED_UPDATE",
    "DEFAULT_THREAD_STRATEGY",
    "GO_AHEAD_SIGNAL",
    "INTERRUPT_SIGNAL",
    "MAX_DONE_RUNS",
    "RUN_ANSWERED_SIGNAL",
    "RUN_ENDED_SIGNAL",
    "RUN_WAITING_SIGNAL",
    "SEND_UPDATE",
    "STEER_SIGNAL",
    "THREAD_STRATEGIES",
    "THREAD_WORKFLOW_ID_PREFIX",
    "VIEW_QUERY",
    "Outcome",
    "RunsWaitingQuery",
    "ThreadMessage",
    "ThreadOutcome",
    "ThreadRun",
    "ThreadRunEntry",
    "ThreadRunNote",
    "ThreadRunState",
    "ThreadState",
    "ThreadStrategy",
    "ThreadView",
]

ThreadStrategy: TypeAlias = Literal["reject", "enqueue", "interrupt", "rollback", "steer"]
"""What a new message does when its thread has an active run (README, "Threads")."""

THREAD_STRATEGIES: tuple[ThreadStrategy, ...] = ("reject", "enqueue", "interrupt", "rollback", "steer")

DEFAULT_THREAD_STRATEGY: ThreadStrategy = "enqueue"
"""Nothing a person sends is lost, and every caller gets a run to follow as before (README, "Threads")."""

Outcome: TypeAlias = Literal["started", "queued", "rejected", "steered", "duplicate"]

ThreadRunState: TypeAlias = Literal["active", "queued", "waiting", "done"]

THREAD_WORKFLOW_ID_PREFIX = "thread-"
"""Every thread's workflow id starts so: a run whose parent workflow has such an id is a thread's run, a top run (not
a sub-agent's), which listings and pages treat as having no parent."""

SEND_UPDATE = "tempo_agents.thread_send"
CANCEL_QUEUED_UPDATE = "tempo_agents.thread_cancel_queued"
VIEW_QUERY = "tempo_agents.thread_view"
STEER_SIGNAL = "tempo_agents.steer"
INTERRUPT_SIGNAL = "tempo_agents.interrupt"

RUN_WAITING_SIGNAL = "tempo_agents.thread_run_waiting"
"""From a run to its thread: it waits only for people now and yields the thread (``ThreadRunNote``)."""
RUN_ANSWERED_SIGNAL = "tempo_agents.thread_run_answered"
"""From a run that yielded to its thread: it was answered and asks for its turn to go on (``ThreadRunNote``)."""
RUN_ENDED_SIGNAL = "tempo_agents.thread_run_ended"
"""From a run that yielded to its thread: it ended (``ThreadRunNote`` with its status); the thread may have continued
as new since, and hold no handle of it."""
GO_AHEAD_SIGNAL = "tempo_agents.thread_go_ahead"
"""From a thread to a run that asked for its turn: go on, the thread is yours."""

MAX_DONE_RUNS = 100
"""How many ended runs a thread's workflow lists (and carries across continue-as-new)."""


class ThreadRun(WireModel):
    """A run the thread's workflow starts when its turn comes: its input, search attributes (all Keyword, by name),
    workflow task timeout and memo, everything ``App`` would have started it with."""

    run_input: RunInput
    task_queue: str
    search_attributes: dict[str, str] = Field(default_factory=dict)
    task_timeout_seconds: float | None = None
    memo: dict[str, Any] = Field(default_factory=dict)
    continues: bool = False
    """The rest of a run that yielded the thread while it waited and has been answered: in its turn the thread tells
    it to go on (``GO_AHEAD_SIGNAL``) rather than starting it."""

    @property
    def run_id(self) -> str:
        return self.run_input.run_id


class ThreadMessage(WireModel):
    """The ``thread_send`` update: a new message (as the run it would start) and what to do if the thread is busy."""

    run: ThreadRun
    strategy: ThreadStrategy = DEFAULT_THREAD_STRATEGY
    sent_by: str | None = None


class ThreadOutcome(WireModel):
    """What happened to a message sent to a thread.

    ``started``: ``run_id`` runs now. ``queued``: ``run_id`` runs after ``active_run_id``, ``position`` in the
    queue (1: next). ``rejected``: ``active_run_id`` holds the thread, nothing started. ``steered``: the message
    went into ``active_run_id``, no run of its own. ``duplicate``: a run with ``run_id`` was already sent to the
    thread (an event delivered twice).
    """

    outcome: Outcome
    run_id: str
    active_run_id: str | None = None
    position: int | None = None


class ThreadRunEntry(WireModel):
    """One run of a thread as the thread's workflow knows it. ``status``: how a done run ended (``COMPLETED``,
    ``FAILED``, ``CANCELED``, ``TERMINATED``, ``TIMED_OUT``, ``removed`` from the queue before it ran, or
    ``not-started`` when its id was taken)."""

    run_id: str
    agent_id: str
    state: ThreadRunState
    status: str | None = None
    continues: bool | None = None
    """``True`` on a queued entry that is a waiting run's rest, answered already: it goes on in its turn and cannot
    be removed from the queue (``cancel_queued`` refuses it). Absent (``None``) on every other entry."""


class ThreadView(WireModel):
    """The thread's runs: active (in start order), queued (in the order they will run; a waiting run's continuation
    among them), done (oldest first), and waiting (yielded the thread while they wait for people)."""

    thread_id: str
    resource_id: str
    active: list[ThreadRunEntry] = Field(default_factory=list)
    queued: list[ThreadRunEntry] = Field(default_factory=list)
    done: list[ThreadRunEntry] = Field(default_factory=list)
    waiting: list[ThreadRunEntry] = Field(default_factory=list)
    """Runs that wait only for people and have yielded the thread (in the order they began waiting)."""


class ThreadState(WireModel):
    """The thread's workflow input, and what it carries across continue-as-new (it does so only between runs)."""

    thread_id: str
    resource_id: str
    done: list[ThreadRunEntry] = Field(default_factory=list)
    queue: list[ThreadRun] = Field(default_factory=list)
    waiting: list[ThreadRun] = Field(default_factory=list)
    """Runs that yielded the thread while they wait for people (the thread only signals them)."""
    jumped: list[str] = Field(default_factory=list)
    """The queued runs sent with ``interrupt`` or ``rollback``: they wait at the head of the queue, in arrival order."""


class ThreadRunNote(WireModel):
    """What a run tells its thread (``RUN_WAITING_SIGNAL``, ``RUN_ANSWERED_SIGNAL``, ``RUN_ENDED_SIGNAL``)."""

    run_id: str
    status: str | None = None
    """How the run ended (``RUN_ENDED_SIGNAL``): ``COMPLETED``, ``FAILED`` or ``CANCELED``."""


class RunsWaitingQuery(WireModel):
    """Which of ``run_ids`` (runs of the thread) wait for a person."""

    thread_id: str
    resource_id: str
    run_ids: list[str]


def __getattr__(name: str) -> Any:
    """A name the previous release had here and that moved: found where it lives now, with a warning."""
    return moved_name(__name__, name)
