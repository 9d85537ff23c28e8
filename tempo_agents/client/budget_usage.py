"""What a run, a thread or a resource has spent against its budget, and answering a run that waits for a raise."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents._wire import WireModel
from tempo_agents.budgets import NANOS_PER_USD, Budget, Period, Scope, step_counters
from tempo_agents.client.update_resends import execute_update_resending
from tempo_agents.errors import TempoAgentsError
from tempo_agents.store.base import Store
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import BudgetAnswer, BudgetWait, ResumeAccepted
from tempo_agents.workflows.resume_errors import NOT_SUSPENDED

__all__ = [
    "BUDGET_UPDATE",
    "BudgetRefusedError",
    "BudgetUsage",
    "CounterUsage",
    "read_usage",
    "run_usage",
    "send_budget_answer",
]

BUDGET_UPDATE = "budget"
"""The workflow's update that answers a budget wait (``AgentRunWorkflow.answer_budget``)."""

if TYPE_CHECKING:
    from temporalio.client import Client


class BudgetRefusedError(TempoAgentsError):
    """A budget answer the run refused (it does not wait for its budget, or the answer lacks a budget)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class CounterUsage(WireModel):
    """One counter: what was spent in it, its limits and what remains (``None``: no limit)."""

    scope: Scope
    period: Period
    period_key: str
    tokens: int
    cost_usd: float
    limit_tokens: int | None = None
    limit_cost_usd: float | None = None
    remaining_tokens: int | None = None
    remaining_cost_usd: float | None = None


class BudgetUsage(WireModel):
    """Usage and remaining budget of a run (its run, thread and resource counters) or of a thread/resource."""

    budget: Budget | None
    counters: list[CounterUsage]
    waiting: BudgetWait | None = None
    """Set while the run waits for a person to raise its budget."""


async def read_usage(
    store: Store,
    budget: Budget | None,
    *,
    run_id: str | None,
    thread: str | None,
    resource: str | None,
    at: datetime | None = None,
    waiting: BudgetWait | None = None,
) -> BudgetUsage:
    """The counters of the run (if any), its thread and resource for the day and month of ``at`` (now)."""
    found = step_counters(run_id or "", thread, resource, at or datetime.now(UTC))
    if run_id is None:
        found = [c for c in found if c.scope != "run"]
    counted = await store.usage_counters([(c.scope_key, c.period_key) for c in found])
    rows = []
    for c in found:
        tokens, nanos = counted.get((c.scope_key, c.period_key), (0, 0))
        limits = budget.limits(c.scope, c.period) if budget is not None else None
        limit_tokens = limits.tokens if limits is not None else None
        limit_cost = limits.cost_usd if limits is not None else None
        limit_nanos = limits.cost_nanos if limits is not None else None
        rows.append(
            CounterUsage(
                scope=c.scope,
                period=c.period,
                period_key=c.shown_period,
                tokens=tokens,
                cost_usd=nanos / NANOS_PER_USD,
                limit_tokens=limit_tokens,
                limit_cost_usd=limit_cost,
                remaining_tokens=None if limit_tokens is None else max(0, limit_tokens - tokens),
                remaining_cost_usd=None if limit_nanos is None else max(0, limit_nanos - nanos) / NANOS_PER_USD,
            )
        )
    return BudgetUsage(budget=budget, counters=rows, waiting=waiting)


async def run_usage(client: Client, store: Store, run_id: str) -> BudgetUsage:
    """A run's usage against its budget, from the run's ``budget`` query and the store's counters."""
    state = await client.get_workflow_handle(run_id).query(AgentRunWorkflow.budget)
    return await read_usage(
        store,
        state.budget,
        run_id=run_id,
        thread=state.thread,
        resource=state.resource,
        at=state.waiting.since if state.waiting is not None else None,
        waiting=state.waiting,
    )


async def send_budget_answer(client: Client, run_id: str, answer: BudgetAnswer) -> ResumeAccepted:
    """The ``budget`` update: raise the run's budget or end the run; refused when the run does not wait."""
    try:
        handle = client.get_workflow_handle(run_id)
        update_id = f"budget:{uuid.uuid4()}"
        return await execute_update_resending(handle, BUDGET_UPDATE, answer, id=update_id, result_type=ResumeAccepted)
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        if isinstance(cause, ApplicationError):
            raise BudgetRefusedError(cause.message, cause.type or "") from None
        raise
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise
        raise BudgetRefusedError("run is not waiting for its budget (it has ended)", NOT_SUSPENDED) from None
