"""The SQLite store's connections: one writer thread and one reader thread, each with a connection of its own,
and short reads on the caller's thread.

Every write runs on the writer thread, in order; reads run on the reader thread, where WAL lets them proceed while
the writer commits, so tailing clients never queue behind the worker's writes. The one exception is
:meth:`SQLiteConnections.read_here`: a read of a few rows that the caller's thread (the event loop's) runs itself,
on a connection of its own that never waits for a lock. A tail reads a run's newest chunks this way, many times a
second: the query is a primary-key seek over pages the writer has just written (in the page cache, a few
microseconds), where handing it to the reader thread and back took two thread switches and, on a busy process,
a wait for the GIL on each (bench/README.md, ``many_watchers.py``: one stream per run, p95 lag ~33 ms by the reader
thread, ~15 ms read here).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from tempo_agents.store.sealed_columns import SealedColumns
from tempo_agents.store.sqlite.group_commit import GroupCommit
from tempo_agents.store.sqlite.schema import open_writer

__all__ = ["SQLiteConnections"]

_T = TypeVar("_T")


class SQLiteConnections:
    """The writer and reader threads of one SQLite file (module docstring), and how its columns are sealed."""

    def __init__(self, path: Path, columns: SealedColumns | None = None) -> None:
        self.path = path
        self.columns = columns or SealedColumns()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tempo-agents-sqlite")
        self._read_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tempo-agents-sqlite-read")
        self._connection: sqlite3.Connection | None = None
        self._read_connection: sqlite3.Connection | None = None
        self._here: dict[int, sqlite3.Connection] = {}
        """``read_here``'s connections, by the thread that reads on each."""
        self._here_lock = threading.Lock()
        self.after_write: Callable[[sqlite3.Connection], None] | None = None
        """Called on the writer thread with its connection after each job (the watcher marks its own commits)."""
        self._groups = GroupCommit(self._executor, self._connect, self._after_job)

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            self._connection = open_writer(self.path)
        return self._connection

    def _connect_reader(self) -> sqlite3.Connection:
        if self._read_connection is None:
            connection = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA query_only=ON")
            self._read_connection = connection
        return self._read_connection

    async def run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run on the writer thread (every write, in order)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._job, work)

    async def run_grouped(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run on the writer thread, in one transaction with the other grouped writes queued meanwhile
        (``group_commit.py``): ``work`` keeps its writes in one ``immediate`` block."""
        return await self._groups.run(work)

    def _job(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        db = self._connect()
        try:
            return work(db)
        finally:
            self._after_job(db)

    def _after_job(self, db: sqlite3.Connection) -> None:
        if self.after_write is not None:
            self.after_write(db)

    async def ready(self) -> None:
        """Have the writer open the file (and create its tables) unless it did already."""
        if self._connection is None:
            await self.run(lambda db: None)

    async def read(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run on the reader thread: WAL lets reads proceed while the writer commits, so tailing clients
        never queue behind the worker's writes."""
        await self.ready()  # the writer creates the schema first
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._read_executor, lambda: work(self._connect_reader()))

    def read_here(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run a short read on the calling thread, on that thread's own read-only connection. Its busy timeout is
        zero: when another connection holds the file in a way that would make a read wait (a WAL recovery, a
        lock taken outside this store), it raises ``sqlite3.OperationalError`` at once instead of blocking the
        caller's event loop, and the caller reads on the reader thread instead. The tables must exist
        (``ready``)."""
        thread = threading.get_ident()
        db = self._here.get(thread)
        if db is None:
            db = sqlite3.connect(self.path, timeout=0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA query_only=ON")
            with self._here_lock:
                self._here[thread] = db
        return work(db)

    async def after_reads(self, work: Callable[[], _T]) -> _T:
        """Run ``work`` on the reader thread, after the reads queued before it, without a connection."""
        return await asyncio.get_running_loop().run_in_executor(self._read_executor, work)

    async def close(self) -> None:
        """Close both connections and let both threads end."""

        def work(db: sqlite3.Connection) -> None:
            db.close()

        if self._connection is not None:
            await self.run(work)
            self._connection = None
        if self._read_connection is not None:
            await self.read(work)
            self._read_connection = None
        with self._here_lock:
            here, self._here = list(self._here.values()), {}
        for db in here:
            db.close()
        self._executor.shutdown(wait=False)
        self._read_executor.shutdown(wait=False)
