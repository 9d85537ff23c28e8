"""What a request may not see: the runs and schedules of other tenants it names, marked so that the very lookup
that finds a run or schedule for its route answers that it does not exist.

The route then goes its own way (checks its body, words its 404), so another tenant's run is answered exactly as a
run nothing has, whatever the request holds. The mark lives for the request's task only.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar

__all__ = ["hide", "is_hidden"]

_HIDDEN: ContextVar[frozenset[str]] = ContextVar("tempo_agents_hidden", default=frozenset())


def hide(ids: Iterable[str]) -> None:
    """Mark ``ids`` (run and schedule ids) as not existing for the rest of this request (replacing any mark)."""
    _HIDDEN.set(frozenset(ids))


def is_hidden(thing_id: str) -> bool:
    """Whether the request must be answered as if ``thing_id`` did not exist."""
    return thing_id in _HIDDEN.get()
