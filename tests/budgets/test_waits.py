"""The budget wait's names: what the store's waiting calls and the journal carry, byte for byte."""

from __future__ import annotations

from tempo_agents.budgets import BUDGET_TOOL_NAME, budget_wait_id, is_budget_wait


def test_a_budget_wait_is_named_as_the_store_and_journal_carry_it() -> None:
    assert BUDGET_TOOL_NAME == "budget"
    assert budget_wait_id(3, 0) == "budget-3-0"
    assert budget_wait_id(12, 2) == "budget-12-2"


def test_only_a_budget_named_wait_is_a_budget_wait() -> None:
    assert is_budget_wait("budget", "budget-3-0")
    assert not is_budget_wait("budget", "call-1")  # a user's tool named "budget"
    assert not is_budget_wait("approve", "budget-3-0")
