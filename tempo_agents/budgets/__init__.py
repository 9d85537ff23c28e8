"""Budgets: limits on tokens and cost per run, thread and resource, the price table, and the counters they read.

Everything here is data and pure functions: the workflow carries a :class:`Budget` in its run options, the
model-step activity reads the counters from the store, compares them with :func:`reached`, and adds the step's
:func:`charges` in the transaction that saves the step (ARCHITECTURE.md, "Budgets").
"""

from tempo_agents.budgets.counters import Counter, charges, counters, period_keys
from tempo_agents.budgets.limits import Budget, BudgetLimits, BudgetStop, PeriodLimits, merge_budgets, reached
from tempo_agents.budgets.prices import DEFAULT_PRICES, PRICES_PUBLISHED, ModelPrice, PriceTable, cost_nanos

__all__ = [
    "DEFAULT_PRICES",
    "PRICES_PUBLISHED",
    "Budget",
    "BudgetLimits",
    "BudgetStop",
    "Counter",
    "ModelPrice",
    "PeriodLimits",
    "PriceTable",
    "charges",
    "cost_nanos",
    "counters",
    "merge_budgets",
    "period_keys",
    "reached",
]
