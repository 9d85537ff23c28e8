"""What a run gives back: its result, and the snapshot of every figure a run page shows."""

from __future__ import annotations

from pydantic import Field

from tempo_agents._wire import WireModel
from tempo_agents.models.usage import Usage
from tempo_agents.tasks import TaskItem
from tempo_agents.workflows.payloads.answers import Answer
from tempo_agents.workflows.payloads.budgets import BudgetState
from tempo_agents.workflows.payloads.pending_calls import PendingCall
from tempo_agents.workflows.steering import SteerRequest

__all__ = ["RunResult", "RunSnapshot"]


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
