"""Readers waiting for a run's next chunk, woken from any thread (both stores' tailing)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

__all__ = ["Waiter", "wake"]


class Waiter:
    """A reader in ``wait_for_chunks``, waiting for a chunk at ``offset`` or later."""

    __slots__ = ("future", "loop", "offset")

    def __init__(self, offset: int, loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]) -> None:
        self.offset = offset
        self.loop = loop
        self.future = future

    @classmethod
    def here(cls, offset: int) -> Waiter:
        """A waiter on the running event loop."""
        loop = asyncio.get_running_loop()
        return cls(offset, loop, loop.create_future())


def wake(waiters: Iterable[Waiter]) -> None:
    """Resolve the waiters' futures on their own loops (safe from any thread)."""
    for waiter in waiters:
        if not waiter.loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                waiter.loop.call_soon_threadsafe(_resolve, waiter.future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
