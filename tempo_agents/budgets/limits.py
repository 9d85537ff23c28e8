"""What a budget limits, and which limit a run's spending has reached."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, Strict

from tempo_agents._wire import WireModel

__all__ = [
    "NANOS_PER_USD",
    "Budget",
    "BudgetLimits",
    "BudgetPolicy",
    "BudgetStop",
    "Period",
    "PeriodLimits",
    "Scope",
    "Spent",
    "merge_budgets",
    "reached",
]

NANOS_PER_USD = 1_000_000_000
"""Costs are counted in billionths of a US dollar (integers: sums are exact in both stores)."""

Scope = Literal["run", "thread", "resource"]
Period = Literal["total", "day", "month"]
BudgetPolicy = Literal["finish", "wait"]


class BudgetLimits(WireModel):
    """At most ``tokens`` (input plus output) and at most ``cost_usd`` US dollars; ``None``: no limit."""

    model_config = ConfigDict(extra="forbid")

    tokens: Annotated[int, Strict()] | None = Field(default=None, ge=0)
    cost_usd: Annotated[float, Strict()] | None = Field(default=None, ge=0)
    """Both strict: ``true`` is no number (an integer cost is a number of dollars)."""

    @property
    def cost_nanos(self) -> int | None:
        return None if self.cost_usd is None else int(Decimal(str(self.cost_usd)) * NANOS_PER_USD)


class PeriodLimits(WireModel):
    """Limits of a thread or a resource: over all time, per UTC calendar day and per UTC calendar month."""

    model_config = ConfigDict(extra="forbid")

    total: BudgetLimits | None = None
    day: BudgetLimits | None = None
    month: BudgetLimits | None = None

    def of(self, period: Period) -> BudgetLimits | None:
        return self.total if period == "total" else self.day if period == "day" else self.month


class Budget(WireModel):
    """The limits a run keeps to, and what it does when one is reached.

    ``run`` limits the run itself; ``thread`` its memory thread and ``resource`` its memory resource (the
    tenant), over all runs of them (runs without ``memory`` have neither). ``on_exceeded``: ``"finish"`` ends
    the run with the finish reason ``budget-exceeded``; ``"wait"`` waits for a person to raise the limit or end
    the run (an inbox item, answered by :meth:`App.answer_budget` or ``POST /api/runs/{runId}/budget``).
    """

    model_config = ConfigDict(extra="forbid")

    run: BudgetLimits | None = None
    thread: PeriodLimits | None = None
    resource: PeriodLimits | None = None
    on_exceeded: BudgetPolicy = "finish"

    def limits(self, scope: Scope, period: Period) -> BudgetLimits | None:
        if scope == "run":
            return self.run if period == "total" else None
        found = self.thread if scope == "thread" else self.resource
        return None if found is None else found.of(period)


def merge_budgets(*layers: Mapping[str, Any] | Budget | None) -> dict[str, Any] | None:
    """Budgets given as the App's, the agent's and the run's (in that order), merged field by field: a later
    layer's limit wins over an earlier one's (run over agent over App)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        if layer is None:
            continue
        data = layer.model_dump(exclude_unset=True) if isinstance(layer, Budget) else dict(layer)
        merged = _deep_merge(merged, Budget.model_validate(data).model_dump(exclude_unset=True))
    return merged or None


def _deep_merge(under: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(under)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


class Spent(WireModel):
    """Tokens and cost counted so far in one counter."""

    tokens: int = 0
    cost_nanos: int = 0

    @property
    def cost_usd(self) -> float:
        return self.cost_nanos / NANOS_PER_USD


class BudgetStop(WireModel):
    """The limit a model step found reached, journaled as ``data-budget-exceeded`` and shown in the inbox."""

    scope: Scope
    period: Period
    period_key: str
    """Which period: ``total``, ``2026-12-02`` (a UTC day) or ``2026-12`` (a UTC month)."""
    metric: Literal["tokens", "cost_usd"]
    used: float
    limit: float
    policy: BudgetPolicy
    step: int = 0
    wait_id: str | None = None
    """The waiting entry's id (``budget-<step>-<n>``) when the policy waits for a person."""


def reached(budget: Budget, spent: Sequence[tuple[Scope, Period, str, Spent]]) -> BudgetStop | None:
    """The first limit (run, then thread, then resource; total, day, month) that ``spent`` has reached."""
    for scope, period, period_key, counted in spent:
        limits = budget.limits(scope, period)
        if limits is None:
            continue
        if limits.tokens is not None and counted.tokens >= limits.tokens:
            return BudgetStop(
                scope=scope,
                period=period,
                period_key=period_key,
                metric="tokens",
                used=counted.tokens,
                limit=limits.tokens,
                policy=budget.on_exceeded,
            )
        cost_limit = limits.cost_nanos
        if cost_limit is not None and counted.cost_nanos >= cost_limit:
            return BudgetStop(
                scope=scope,
                period=period,
                period_key=period_key,
                metric="cost_usd",
                used=counted.cost_usd,
                limit=limits.cost_usd or 0.0,
                policy=budget.on_exceeded,
            )
    return None
