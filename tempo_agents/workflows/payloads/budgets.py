"""A run's budget as its queries and its ``budget`` update see it: a person's answer to a run that waits for a raise,
the wait, and the budget with the memory it counts under."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from tempo_agents._wire import WireModel
from tempo_agents.budgets import Budget, BudgetStop

__all__ = ["BudgetAnswer", "BudgetState", "BudgetWait"]


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
