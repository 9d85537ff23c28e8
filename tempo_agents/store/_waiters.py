"""Readers waiting for a run's next chunk, woken from any thread (both stores' tailing)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Iterable
from contextvars import ContextVar

__all__ = ["RUNS_KEPT", "RecentAppends", "Waiter", "wake"]

RUNS_KEPT = 10_000
"""How many runs' last appends a :class:`RecentAppends` remembers (the oldest is forgotten first)."""

_read_began: ContextVar[tuple[int, str, int] | None] = ContextVar("tempo_agents_read_began", default=None)
"""The task's last read of a journal: the :class:`RecentAppends` (``id``), the run and its sequence number then."""


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


class RecentAppends:
    """The last offset appended to each run as this process heard of it, in order with the reads of its readers, so
    that a reader that waits right after reading is answered at once when an append at its offset came after its
    read began (it arrived between the read and the wait, where nothing would wake the reader).

    The stores' tailing (the SQLite watcher, the PostgreSQL listener) keeps one and guards it with its own lock."""

    def __init__(self) -> None:
        self._sequence = itertools.count(1)
        """Orders reads, appends and the stores' own events (``next`` is atomic)."""
        self._last: dict[str, tuple[int, int]] = {}
        """Per run, the last offset appended and its sequence number, oldest first."""
        self.forgotten_at = 0
        """The sequence number of the newest append forgotten to keep this small."""

    def next(self) -> int:
        """A sequence number after every one handed out so far."""
        return next(self._sequence)

    def reading(self, run_id: str) -> None:
        """Note that the current task begins a read of the run's journal."""
        _read_began.set((id(self), run_id, self.next()))

    def read_at(self, run_id: str) -> int:
        """When the current task's last read of the run began (0: it did not read it, as far as this knows)."""
        began = _read_began.get()
        return began[2] if began is not None and began[:2] == (id(self), run_id) else 0

    def appended(self, run_id: str, last: int) -> None:
        """Note an append to the run up to offset ``last``."""
        self._last.pop(run_id, None)
        self._last[run_id] = (last, self.next())
        if len(self._last) > RUNS_KEPT:
            self.forgotten_at = self._last.pop(next(iter(self._last)))[1]

    def answers(self, run_id: str, offset: int, read_at: int) -> bool:
        """Whether an append at ``offset`` or later came after the read that began at ``read_at``."""
        last = self._last.get(run_id)
        return last is not None and last[0] >= offset and last[1] > read_at
