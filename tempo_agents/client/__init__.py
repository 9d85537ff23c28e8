"""The client: the :class:`App` and the focused modules behind it (start, stream, answer, query, fork, usage)."""

from tempo_agents.client.app import App
from tempo_agents.client.budget_usage import BudgetRefusedError, BudgetUsage
from tempo_agents.client.run_control import RollbackResult
from tempo_agents.client.run_queries import RunQueries
from tempo_agents.client.waiting_runs import WaitingPage, WaitingRun

__all__ = ["App", "BudgetRefusedError", "BudgetUsage", "RollbackResult", "RunQueries", "WaitingPage", "WaitingRun"]
