"""What every activity does around its work: heartbeats, errors Temporal can act on, a local activity's starts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from tempo_agents.activity_options import PROVIDER_ATTEMPTS
from tempo_agents.errors import ConfigurationError, ErasedRunError, ModelError, StoreUnavailableError
from tempo_agents.store.base import START_COUNT_SUFFIX, StartFence, Store
from tempo_agents.store.patience import waiting_for_store

__all__ = [
    "HEARTBEAT_SECONDS",
    "MESSAGE_LIMIT",
    "PROVIDER_RETRY_CAP_SECONDS",
    "STORE_RETRY_DELAY",
    "STORE_WAIT_MARGIN_SECONDS",
    "attempt",
    "is_local",
    "may_have_run_before",
    "run_activity",
    "saved_or_counted_start",
    "start_fence",
]

_T = TypeVar("_T")

HEARTBEAT_SECONDS = 1.0
"""Heartbeats keep a worker's claim on its activity: when they stop, Temporal retries it elsewhere."""

PROVIDER_RETRY_CAP_SECONDS = 30
"""A provider error without ``retry-after`` is retried after 1, 2, 4 … seconds, at most this long."""

STORE_RETRY_DELAY = timedelta(seconds=1)
"""An attempt that gave up on an unreachable store has waited for it most of its time already: the next attempt
starts soon, so a run moves again as soon as the database answers."""

STORE_WAIT_MARGIN_SECONDS = 5.0
"""An attempt waits for an unreachable store until this long before its ``start_to_close_timeout`` (at least 1 s),
then fails with the store's error (retryable) rather than a timeout."""

MESSAGE_LIMIT = 1000
"""Failure messages are cut here: Temporal keeps a failure only while it is small."""


async def run_activity(work: Awaitable[_T]) -> _T:
    """Run ``work`` while heartbeating; turn errors that retrying cannot fix into non-retryable failures.

    Failures carry a short message and no chained cause, so the Temporal UI shows why each attempt
    failed (a failure with stack traces of a long cause chain is over the server's size limit).
    """
    # A local activity runs inside its workflow task, which the worker keeps alive: it has nothing to heartbeat.
    beats = None if is_local() else asyncio.create_task(_beat())
    try:
        attempt_seconds = _attempt_seconds()
        if attempt_seconds <= 0:  # no timeout: the store's own retry window
            return await work
        with waiting_for_store(max(1.0, attempt_seconds - STORE_WAIT_MARGIN_SECONDS)):
            return await work
    except (ConfigurationError, ErasedRunError) as error:  # an erased run's writes are refused for good
        raise ApplicationError(_short(error.message), type=type(error).__name__, non_retryable=True) from None
    except ModelError as error:
        this_attempt = attempt()
        delay = timedelta(seconds=error.retry_after or min(2 ** (this_attempt - 1), PROVIDER_RETRY_CAP_SECONDS))
        final = not error.retryable or this_attempt >= PROVIDER_ATTEMPTS
        raise ApplicationError(
            _short(error.message), type=type(error).__name__, non_retryable=final, next_retry_delay=delay
        ) from None
    except StoreUnavailableError as error:
        # The store waited for its database most of the attempt; Temporal tries again soon (maybe elsewhere).
        raise ApplicationError(
            _short(error.message), type=type(error).__name__, non_retryable=False, next_retry_delay=STORE_RETRY_DELAY
        ) from None
    finally:
        if beats is not None:
            beats.cancel()


async def _beat() -> None:
    while True:  # the first after a second: most activities are done by then and never pay for one
        await asyncio.sleep(HEARTBEAT_SECONDS)
        activity.heartbeat()


def _attempt_seconds() -> float:
    """How long this attempt may run (0 outside an activity or without a timeout)."""
    if not activity.in_activity():
        return 0.0
    timeout = activity.info().start_to_close_timeout
    return timeout.total_seconds() if timeout is not None else 0.0


def _short(message: str) -> str:
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"


def attempt() -> int:
    """This attempt's number (1 for the first; also 1 outside an activity)."""
    return activity.info().attempt if activity.in_activity() else 1


def may_have_run_before() -> bool:
    """Whether an earlier attempt of this activity may have run: a retry, or any local activity (a local activity
    whose worker was lost is called again by the next workflow task at attempt 1)."""
    return attempt() > 1 or is_local()


def is_local() -> bool:
    """Whether this is a local activity (ARCHITECTURE.md, "Local activities")."""
    return activity.in_activity() and activity.info().is_local


async def saved_or_counted_start(store: Store, run_id: str, key: str) -> tuple[dict[str, Any] | None, int]:
    """The outcome of the local activity saved under ``key`` if it ended before (and 0), else ``None`` and this
    start's number (1 for the first): one store call, the counter kept beside the outcome it counts for.

    A local activity whose worker was lost starts again at attempt 1 in the next workflow task, so Temporal's
    attempt number cannot tell how many workers a local model step or tool call has lost. Its starts are counted
    in the store instead (a saved outcome of its own, ``<key>:starts``, written before the work begins), where
    they survive the worker: the count is the attempt number the work sees, and a start past
    ``maximum_attempts`` stops it (ARCHITECTURE.md, "Local activities").
    """
    return await store.saved_or_counted(run_id, key, _starts_key(key))


def start_fence(key: str, start: int) -> StartFence:
    """The fence of the writes of start ``start`` (from :func:`saved_or_counted_start` with ``key``): refused once
    a later start is counted (ARCHITECTURE.md, "Local activities")."""
    return StartFence(_starts_key(key), start)


def _starts_key(key: str) -> str:
    return f"{key}{START_COUNT_SUFFIX}"
