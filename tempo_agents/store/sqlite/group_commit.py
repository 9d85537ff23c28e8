"""Group commit: the journal writes that queue for the SQLite writer thread while it is busy share one transaction.

A hundred runs streaming at once each append a text delta every few tens of milliseconds; one transaction each
made the writer thread pay ``BEGIN IMMEDIATE``, ``COMMIT`` (the WAL's frames and index) and a hand-back to the event
loop a hundred times where once would do. Here a write joins the queue; the first to join submits a job to the
writer thread, which takes every write queued by the time it runs and runs them in one transaction, each inside a
savepoint of its own, so a write that raises (a run erased, a superseded start) is rolled back alone and the others
commit. Every caller learns its outcome only after the ``COMMIT``, each event loop in one hand-back; if the ``COMMIT``
(or the ``BEGIN``) fails, every write of the group fails with its error, none of them written. A hundred runs of
one process appending at once: 2,400 chunks a second at 430 us of CPU each before, 11,000-15,000 at 70-90 us with
groups (bench/README.md, ``store.py``). A lone write is a group of one: two statements more (its savepoint).

A grouped write's work must keep its writes in one :func:`~tempo_agents.store.sqlite.transactions.immediate` block,
which in a group is the group's transaction. The order of the writes is the order they joined; a write joins after
those its caller awaited, so a run's journal, written one awaited write at a time, keeps its order.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tempo_agents.store.sqlite.transactions import immediate

__all__ = ["GroupCommit"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class _Write(Generic[_T]):
    work: Callable[[sqlite3.Connection], _T]
    future: asyncio.Future[_T]
    loop: asyncio.AbstractEventLoop


class GroupCommit:
    """The queue of writes for one writer thread (module docstring)."""

    def __init__(
        self,
        executor: Executor,
        connect: Callable[[], sqlite3.Connection],
        after_write: Callable[[sqlite3.Connection], None],
    ) -> None:
        self._executor = executor
        self._connect = connect
        self._after_write = after_write
        self._queued: list[_Write[Any]] = []
        self._lock = threading.Lock()

    async def run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work`` on the writer thread in the transaction of the next group; its outcome once committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        write = _Write(work, future, loop)
        with self._lock:
            self._queued.append(write)
            first = len(self._queued) == 1
        if first:
            try:
                self._executor.submit(self._commit_group)
            except RuntimeError as error:  # the store is closed: no group will take the queued writes
                taken = self._take()
                self._hand_back(taken, [(False, error)] * len(taken))
        return await write.future

    def _take(self) -> list[_Write[Any]]:
        with self._lock:
            writes, self._queued = self._queued, []
        return [write for write in writes if not write.future.cancelled()]  # as a queued executor job would be

    def _commit_group(self) -> None:
        writes = self._take()
        if not writes:
            return
        try:
            outcomes = self._commit(writes)
        except BaseException as error:  # the group is not written: every write fails with why
            outcomes = [(False, error)] * len(writes)
        self._hand_back(writes, outcomes)

    def _hand_back(self, writes: list[_Write[Any]], outcomes: list[tuple[bool, Any]]) -> None:
        """Settle each write's future on its event loop, one call for each loop."""
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
        for write, (done, value) in zip(writes, outcomes, strict=True):
            by_loop.setdefault(write.loop, []).append((write.future, done, value))
        for loop, settled in by_loop.items():
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits any more
                loop.call_soon_threadsafe(_settle, settled)

    def _commit(self, writes: list[_Write[Any]]) -> list[tuple[bool, Any]]:
        db = self._connect()
        try:
            with immediate(db):  # the group's transaction: each write's own ``immediate`` is part of it
                return [_in_savepoint(db, write.work) for write in writes]
        finally:
            self._after_write(db)


def _in_savepoint(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], Any]) -> tuple[bool, Any]:
    db.execute("SAVEPOINT grouped_write")
    try:
        value = work(db)
    except Exception as error:
        db.execute("ROLLBACK TO grouped_write")
        db.execute("RELEASE grouped_write")
        return False, error
    db.execute("RELEASE grouped_write")
    return True, value


def _settle(settled: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for future, done, value in settled:
        if future.cancelled():
            continue
        if done:
            future.set_result(value)
        else:
            future.set_exception(value)
