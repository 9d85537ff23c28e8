"""How long a store operation waits for a database it cannot reach before it gives up.

A store retries a lost database for its own ``retry_seconds`` (short: an HTTP request should hear a 503 soon).
Code that can afford to wait longer says so for everything it calls: an activity waits for most of its attempt
(``activities/_running.py``), so a run stands still through an outage instead of using up its attempts, and
moves again as soon as the database answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_at_least: ContextVar[float] = ContextVar("tempo_agents_store_patience", default=0.0)


def store_patience(own_seconds: float) -> float:
    """How long an operation of a store whose own retry window is ``own_seconds`` may wait for its database."""
    return max(own_seconds, _at_least.get())


@contextmanager
def waiting_for_store(seconds: float) -> Iterator[None]:
    """Store operations called inside (and in tasks started inside) wait at least ``seconds`` for the database."""
    token = _at_least.set(seconds)
    try:
        yield
    finally:
        _at_least.reset(token)
