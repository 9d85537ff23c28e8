"""How long a store operation waits for a database it cannot reach before it gives up.

A store retries a lost database for its own ``retry_seconds`` (short: an HTTP request should hear a 503 soon).
Code that knows better says so for everything it calls: an activity waits for most of its attempt, however long
that is (``activities/_running.py``), so a run stands still through an outage instead of using up its attempts,
and moves again as soon as the database answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["store_patience", "waiting_for_store"]

_override: ContextVar[float | None] = ContextVar("tempo_agents_store_patience", default=None)


def store_patience(own_seconds: float) -> float:
    """How long an operation of a store whose own retry window is ``own_seconds`` may wait for its database: the
    window of the code that called it, if it set one, else the store's own."""
    override = _override.get()
    return own_seconds if override is None else override


@contextmanager
def waiting_for_store(seconds: float) -> Iterator[None]:
    """Store operations called inside (and in tasks started inside) wait ``seconds`` for an unreachable database,
    instead of their store's own retry window."""
    token = _override.set(seconds)
    try:
        yield
    finally:
        _override.reset(token)
