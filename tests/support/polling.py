"""Polling until something the test waits for holds: what another process, a receiver or Temporal's visibility shows
only a moment after the step that caused it."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar, overload

__all__ = ["until"]

T = TypeVar("T")

POLL_INTERVAL = 0.1
"""Seconds between two checks."""


@overload
async def until(check: Callable[[], Awaitable[T | None]], *, timeout: float = 15) -> T: ...


@overload
async def until(check: Callable[[], T | None], *, timeout: float = 15) -> T: ...


async def until(check: Callable[[], Awaitable[T | None] | T | None], *, timeout: float = 15) -> T:
    """Call ``check`` (a function, or one that returns an awaitable, which is awaited) until it gives something truthy,
    and return that (never ``None``, which is not); fail when ``timeout`` seconds pass first (a check that hangs
    included)."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                found = check()
                if inspect.isawaitable(found):
                    found = await found
                if found:
                    return found
                await asyncio.sleep(POLL_INTERVAL)
    except TimeoutError:
        raise AssertionError(f"what the test waited for did not hold within {timeout} s") from None
