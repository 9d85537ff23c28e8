"""The usage counters a model step reads and adds to: one per scope (run, thread, resource) and period.

A counter is named by a scope key (``run:<id>``, ``thread:<resource>:<thread>``, ``resource:<id>``) and a period
key (``total``, ``day:2026-12-02``, ``month:2026-12``). Periods are UTC calendar days and months of the
*workflow's* time (its ``now``, handed to the activity), so a replayed or retried step, or a run on a
time-skipping server, counts in the period the workflow was in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tempo_agents.budgets.limits import Period, Scope
from tempo_agents.deprecations import moved_name

__all__ = [
    "Counter",
    "charges",
    "period_keys",
    "resource_scope_key",
    "resource_threads_prefix",
    "run_scope_key",
    "scope_keys",
    "step_counters",
    "thread_scope_key",
]


@dataclass(frozen=True)
class Counter:
    scope: Scope
    period: Period
    scope_key: str
    period_key: str
    """``total``, ``day:YYYY-MM-DD`` or ``month:YYYY-MM``."""

    @property
    def shown_period(self) -> str:
        """The period as people read it: ``total``, ``2026-12-02``, ``2026-12``."""
        return self.period_key.split(":", 1)[-1]


def period_keys(now: datetime) -> dict[Period, str]:
    utc = now.astimezone(UTC)
    return {"total": "total", "day": f"day:{utc:%Y-%m-%d}", "month": f"month:{utc:%Y-%m}"}


def scope_keys(run_id: str, thread: str | None, resource: str | None) -> dict[Scope, str]:
    keys: dict[Scope, str] = {"run": run_scope_key(run_id)}
    if resource is not None:
        keys["resource"] = resource_scope_key(resource)
        if thread is not None:
            keys["thread"] = thread_scope_key(thread, resource)
    return keys


def run_scope_key(run_id: str) -> str:
    return f"run:{run_id}"


def resource_scope_key(resource: str) -> str:
    return f"resource:{resource}"


def thread_scope_key(thread: str, resource: str) -> str:
    return resource_threads_prefix(resource) + thread


def resource_threads_prefix(resource: str) -> str:
    """What the scope key of every thread of ``resource`` begins with, and no other's (the resource's length comes
    first, so a resource whose id holds a colon cannot pass for another's thread)."""
    return f"thread:{len(resource)}:{resource}:"


def step_counters(run_id: str, thread: str | None, resource: str | None, now: datetime) -> list[Counter]:
    """Every counter a step of this run adds to, in the order limits are checked (and rows locked)."""
    periods = period_keys(now)
    found = []
    every: tuple[Period, ...] = ("total", "day", "month")
    for scope, scope_key in scope_keys(run_id, thread, resource).items():
        for period in every[:1] if scope == "run" else every:
            found.append(Counter(scope, period, scope_key, periods[period]))
    return found


def charges(found: list[Counter], tokens: int, cost: int) -> list[tuple[str, str, int, int]]:
    """``(scope key, period key, tokens, cost in nanos)`` for each counter, sorted (the order stores lock rows)."""
    return sorted((c.scope_key, c.period_key, tokens, cost) for c in found)


def __getattr__(name: str) -> Any:
    """A name the previous release had here and that moved: found where it lives now, with a warning."""
    return moved_name(__name__, name)
