"""What a failed operation of the PostgreSQL store means: the database unreachable, or its pool busy.

A failure to reach the server is :class:`~tempo_agents.errors.StoreUnavailableError` (it names the URL without its
password); a wait for a pooled connection that ran out while the pool is full, and the database answers, is
:class:`~tempo_agents.errors.StoreBusyError`, which says how to size the pool. An :class:`Attempt` says whether a
lost connection may hide a commit, so whether an operation may be tried again in place.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from tempo_agents.errors import StoreBusyError, StoreUnavailableError
from tempo_agents.store import pool_size as sizing

__all__ = ["Attempt", "busy_error", "one_line", "pool_is_full", "unavailable_error"]


class Attempt:
    """What one try of an operation got to: past this point a lost connection may hide a commit."""

    __slots__ = ("committing",)

    def __init__(self) -> None:
        self.committing = False


def one_line(error: BaseException) -> str:
    """The error's text on one line (its type's name when it has none)."""
    text = " ".join(str(error).split())
    return text or type(error).__name__


def unavailable_error(display_url: str, error: BaseException | str, waited: float) -> StoreUnavailableError:
    """The database at ``display_url`` could not be reached, after ``waited`` seconds of trying."""
    tried = f" (retried for {waited:.0f} s)" if waited >= 1 else ""
    reason = error if isinstance(error, str) else one_line(error)
    return StoreUnavailableError(f"cannot reach the PostgreSQL store at {display_url}{tried}: {reason}")


def busy_error(
    display_url: str, pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]], max_size: int, waited: float
) -> StoreBusyError:
    """Every connection of the pool stayed in use for ``waited`` seconds while the database answers."""
    waiting = pool.get_stats().get("requests_waiting", 0)
    return StoreBusyError(
        f"the PostgreSQL store at {display_url} is busy: all {max_size} connections of its pool stayed "
        f"in use for {waited:.0f} s ({waiting} more operations waiting); the database answers. Size "
        f"the pool for the load: ?pool_size=N in the store URL, {sizing.STORE_POOL_SIZE_ENV}, or --store-pool-size"
    )


def pool_is_full(
    error: psycopg.OperationalError, pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]], max_size: int
) -> bool:
    """Whether ``error`` is a wait for a pooled connection that ran out while the pool holds ``max_size``."""
    return isinstance(error, PoolTimeout) and pool.get_stats().get("pool_size", 0) >= max_size
