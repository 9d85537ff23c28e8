"""The SQLite store's connections: one writer thread and one reader thread, each with a connection of its own.

All SQL runs on these private threads so the event loop never blocks on disk. Every write runs on the writer thread,
in order; reads run on the reader thread, where WAL lets them proceed while the writer commits, so tailing clients
never queue behind the worker's writes.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from tempo_agents.store.sealed_columns import SealedColumns
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
        self.after_write: Callable[[sqlite3.Connection], None] | None = None
        """Called on the writer thread with its connection after each job (the watcher marks its own commits)."""

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

    def _job(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        db = self._connect()
        try:
            return work(db)
        finally:
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
        self._executor.shutdown(wait=False)
        self._read_executor.shutdown(wait=False)
