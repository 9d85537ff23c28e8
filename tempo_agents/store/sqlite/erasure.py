"""Erasing runs, threads and resources from the SQLite file so that nothing of them can be read back from it: deleted
by the writer, whose deletions overwrite what they free (``secure_delete``), the file rewritten from its live rows
(``VACUUM``), and the write-ahead log checkpointed and truncated once no reader uses it.

``secure_delete`` alone is not enough: it zeroes the cell a deletion frees, but a row's earlier copies may stay in a
page's unused space, left there when a page was rebuilt around it before (a busy store's erasure found an erased
run's saved outcome in the file that way, in no table). ``VACUUM`` builds the file anew from what is live, so no page
keeps anything of the erased rows; it takes the writer for as long as it copies the file (0.6 s for a 100 MB file on
a 2-core machine), and other writes wait for it.

An erasure on request keeps the erased runs' ids in ``erased_runs``, in the transaction that deletes their rows;
every write under a run id checks it first (:func:`refuse_if_erased`), inside its own ``BEGIN IMMEDIATE``
transaction. Writers and the erasure take turns, so a write either commits before the erasure (and is deleted by it)
or finds the run erased and writes nothing."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Sequence

from tempo_agents.errors import ErasedRunError
from tempo_agents.store.erasure_tables import RESOURCE_TABLES, RUN_TABLES, usage_scopes
from tempo_agents.store.sqlite.connections import SQLiteConnections
from tempo_agents.store.sqlite.schema import WRITER_BUSY_SECONDS
from tempo_agents.store.sqlite.transactions import immediate

__all__ = ["erase", "is_erased", "refuse_if_erased"]

_BATCH = 500
LOG_TRUNCATE_SECONDS = 60.0
"""How long an erasure waits for readers to let go of the write-ahead log before it raises."""
_LOG_TRY_MS = 1000


async def erase(
    connections: SQLiteConnections,
    run_ids: Sequence[str],
    threads: Sequence[tuple[str, str]],
    resources: Sequence[str],
    refuse_later_writes: bool,
) -> int:
    """Delete every row of ``run_ids``, ``threads`` (thread id, resource id) and ``resources``; how many went. With
    ``refuse_later_writes``, keep the runs' ids so that nothing more is written under them."""

    def work(db: sqlite3.Connection) -> int:
        with immediate(db):
            if refuse_later_writes:
                erased_at = time.time()
                db.executemany(
                    "INSERT OR IGNORE INTO erased_runs (run_id, erased_at) VALUES (?, ?)",
                    [(run_id, erased_at) for run_id in run_ids],
                )
            every_thread = [*threads, *_threads_of(db, resources)]  # found before their rows go, for their state
            deleted = _delete_runs(db, run_ids) + _delete_threads(db, threads)
            for resource in resources:
                for table in RESOURCE_TABLES:
                    deleted += db.execute(f"DELETE FROM {table} WHERE resource_id = ?", (resource,)).rowcount
            deleted += _delete_thread_states(db, every_thread) + _delete_usage(db, run_ids, threads, resources)
        return deleted

    deleted = await connections.run(work)
    await connections.run(_rewrite)
    await _truncate_log(connections)
    return deleted


def _rewrite(db: sqlite3.Connection) -> None:
    """Rebuild the file from its live rows, so that no page keeps an old copy of an erased row in its unused space."""
    db.execute("VACUUM")


async def _truncate_log(connections: SQLiteConnections) -> None:
    """Checkpoint the write-ahead log into the file and truncate it, so that the log's copies of the deleted pages
    go too. A reader that is still reading an older snapshot keeps the log in use: the writer thread waits for it
    a second at a time, letting other writes through between tries, and gives up after ``LOG_TRUNCATE_SECONDS``
    with an error (the rows are gone from the tables; the copies stay in the log until a later checkpoint)."""

    def attempt(db: sqlite3.Connection) -> bool:
        db.execute(f"PRAGMA busy_timeout = {_LOG_TRY_MS}")
        try:
            busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            db.execute(f"PRAGMA busy_timeout = {round(WRITER_BUSY_SECONDS * 1000)}")
        return not busy

    deadline = time.monotonic() + LOG_TRUNCATE_SECONDS
    while not await connections.run(attempt):
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"{connections.path}: the erased rows are deleted, but a reader kept the write-ahead log in use "
                f"for {LOG_TRUNCATE_SECONDS:.0f} s, so it still holds copies of them; erase again to finish"
            )
        await asyncio.sleep(0.05)


async def is_erased(connections: SQLiteConnections, run_id: str) -> bool:
    return await connections.read(lambda db: _erased(db, run_id))


def refuse_if_erased(db: sqlite3.Connection, run_id: str) -> None:
    """Raise ``ErasedRunError`` when ``run_id`` was erased on request; call it inside the write's transaction."""
    if _erased(db, run_id):
        raise ErasedRunError(run_id)


def _erased(db: sqlite3.Connection, run_id: str) -> bool:
    return db.execute("SELECT 1 FROM erased_runs WHERE run_id = ?", (run_id,)).fetchone() is not None


def _threads_of(db: sqlite3.Connection, resources: Sequence[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for resource in resources:
        rows = db.execute("SELECT DISTINCT thread_id FROM thread_messages WHERE resource_id = ?", (resource,))
        found.extend((thread_id, resource) for (thread_id,) in rows.fetchall())
    return found


def _delete_runs(db: sqlite3.Connection, run_ids: Sequence[str]) -> int:
    deleted = 0
    for start in range(0, len(run_ids), _BATCH):
        batch = list(run_ids[start : start + _BATCH])
        marks = ",".join("?" * len(batch))
        for table in RUN_TABLES:
            deleted += db.execute(f"DELETE FROM {table} WHERE run_id IN ({marks})", batch).rowcount
    return deleted


def _delete_threads(db: sqlite3.Connection, threads: Sequence[tuple[str, str]]) -> int:
    deleted = 0
    for thread_id, resource_id in threads:
        for table in RESOURCE_TABLES:
            deleted += db.execute(
                f"DELETE FROM {table} WHERE thread_id = ? AND resource_id = ?", (thread_id, resource_id)
            ).rowcount
    return deleted


def _delete_usage(
    db: sqlite3.Connection, run_ids: Sequence[str], threads: Sequence[tuple[str, str]], resources: Sequence[str]
) -> int:
    keys, prefixes = usage_scopes(run_ids, threads, resources)
    deleted = db.executemany("DELETE FROM usage_counters WHERE scope = ?", [(key,) for key in keys]).rowcount
    for prefix in prefixes:
        deleted += db.execute(
            "DELETE FROM usage_counters WHERE substr(scope, 1, ?) = ?", (len(prefix), prefix)
        ).rowcount
    return deleted


def _delete_thread_states(db: sqlite3.Connection, threads: Sequence[tuple[str, str]]) -> int:
    deleted = 0
    for thread_id in dict.fromkeys(thread_id for thread_id, _ in threads):
        if db.execute("SELECT 1 FROM thread_messages WHERE thread_id = ? LIMIT 1", (thread_id,)).fetchone() is None:
            deleted += db.execute("DELETE FROM thread_state WHERE thread_id = ?", (thread_id,)).rowcount
    return deleted
