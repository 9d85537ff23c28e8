"""The budget wait, a kind of wait: a run stopped by its budget under the ``wait`` policy waits for a person.

The model-step activity records such a wait in the store's waiting calls beside the tool calls that wait for a
person, under the tool name :data:`BUDGET_TOOL_NAME` and an id from :func:`budget_wait_id`; the inbox and
``list_suspended_runs`` tell it from a tool call with :func:`is_budget_wait` (ARCHITECTURE.md, "Budgets").
"""

from __future__ import annotations

__all__ = ["BUDGET_TOOL_NAME", "BUDGET_WAIT_ID_PREFIX", "budget_wait_id", "is_budget_wait"]

BUDGET_TOOL_NAME = "budget"
"""The name a budget wait shows in the store's waiting calls (the inbox, ``list_suspended_runs``)."""

BUDGET_WAIT_ID_PREFIX = "budget-"
"""How the id of every budget wait begins."""


def budget_wait_id(step: int, waits: int) -> str:
    """The id of the run's wait at ``step`` after ``waits`` earlier budget waits (the same on every retry)."""
    return f"{BUDGET_WAIT_ID_PREFIX}{step}-{waits}"


def is_budget_wait(tool_name: str, tool_call_id: str) -> bool:
    """Whether a waiting entry of the store is a run's wait for its budget (not a tool call)."""
    return tool_name == BUDGET_TOOL_NAME and tool_call_id.startswith(BUDGET_WAIT_ID_PREFIX)
