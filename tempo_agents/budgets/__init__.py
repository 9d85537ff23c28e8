"""Budgets: limits on tokens and cost per run, thread and resource, the price table, the counters they read, and
the budget wait.

Everything here is data and pure functions: the workflow carries a :class:`Budget` in its run options, the
model-step activity reads the counters from the store, compares them with :func:`reached`, and adds the step's
:func:`charges` in the transaction that saves the step; a run that waits for its budget is a waiting call named by
:func:`budget_wait_id`, which :func:`is_budget_wait` tells from a tool call (ARCHITECTURE.md, "Budgets").
"""

from tempo_agents.budgets.counters import (
    Counter,
    charges,
    period_keys,
    resource_scope_key,
    resource_threads_prefix,
    run_scope_key,
    step_counters,
    thread_scope_key,
)
from tempo_agents.budgets.limits import (
    NANOS_PER_USD,
    Budget,
    BudgetLimits,
    BudgetStop,
    Period,
    PeriodLimits,
    Scope,
    Spent,
    merge_budgets,
    reached,
)
from tempo_agents.budgets.prices import DEFAULT_PRICES, PRICES_PUBLISHED, ModelPrice, PriceTable, cost_nanos
from tempo_agents.budgets.waits import BUDGET_TOOL_NAME, BUDGET_WAIT_ID_PREFIX, budget_wait_id, is_budget_wait

__all__ = [
    "BUDGET_TOOL_NAME",
    "BUDGET_WAIT_ID_PREFIX",
    "DEFAULT_PRICES",
    "NANOS_PER_USD",
    "PRICES_PUBLISHED",
    "Budget",
    "BudgetLimits",
    "BudgetStop",
    "Counter",
    "ModelPrice",
    "Period",
    "PeriodLimits",
    "PriceTable",
    "Scope",
    "Spent",
    "budget_wait_id",
    "charges",
    "cost_nanos",
    "is_budget_wait",
    "merge_budgets",
    "period_keys",
    "reached",
    "resource_scope_key",
    "resource_threads_prefix",
    "run_scope_key",
    "step_counters",
    "thread_scope_key",
]
