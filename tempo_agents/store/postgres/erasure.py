"""Erasing runs, threads and resources from the PostgreSQL store.

An erasure on request keeps the erased runs' ids in ``erased_runs``, in the transaction that deletes their rows, and
every write under a run id checks it first (:func:`refuse_if_erased`). Each run id has an advisory lock (in a key
space of this module's own): writes hold it shared for their whole transaction, the erasure takes it exclusively
before it keeps the id. So a write in flight when the erasure begins commits first and its rows are deleted; a write
that begins later waits for the erasure to commit, then finds the id kept and writes nothing. Runs are erased in
batches of :data:`_BATCH` ids, each batch in a transaction of its own (its locks count against the server's lock
table); threads and resources after them, in one more."""

from __future__ import annotations

import time
from collections.abc import Sequence

from tempo_agents.errors import ErasedRunError
from tempo_agents.store.erasure_tables import RESOURCE_TABLES, RUN_TABLES, usage_scopes
from tempo_agents.store.postgres.connections import Conn, Cursor, PostgresConnections
from tempo_agents.store.postgres.failures import Attempt

__all__ = ["erase", "is_erased", "refuse_erased", "refuse_if_erased", "send_erased_check"]

_BATCH = 500

_RUN_LOCKS = 0x7461_6572  # "taer": the first key of the advisory locks of run ids, beside hashtext(run id)

_LOCK_SHARED = "SELECT pg_advisory_xact_lock_shared(%s::int4, hashtext(%s))"
_LOCK_ALL = (
    "SELECT pg_advisory_xact_lock(%s::int4, key) "
    "FROM (SELECT DISTINCT hashtext(id) AS key FROM unnest(%s::text[]) AS id) AS keys ORDER BY key"
)
"""Every run id's lock, in one order (two erasures never wait for each other in a cycle)."""
_ERASED = "SELECT 1 FROM tempo_agents.erased_runs WHERE run_id = %s"
_KEEP = (
    "INSERT INTO tempo_agents.erased_runs (run_id, erased_at) SELECT id, %s FROM unnest(%s::text[]) AS id "
    "ON CONFLICT (run_id) DO NOTHING"
)


async def erase(
    db: PostgresConnections,
    run_ids: Sequence[str],
    threads: Sequence[tuple[str, str]],
    resources: Sequence[str],
    refuse_later_writes: bool,
) -> int:
    """Delete every row of ``run_ids``, ``threads`` (thread id, resource id) and ``resources``; how many went. With
    ``refuse_later_writes``, keep the runs' ids so that nothing more is written under them. Deleted rows leave
    PostgreSQL's tables at once; their space is reclaimed by the next vacuum."""
    every_thread = [*threads, *await _threads_of(db, resources)]  # found before their rows go, for their state
    deleted = 0
    for start in range(0, len(run_ids), _BATCH):
        deleted += await _erase_runs(db, list(run_ids[start : start + _BATCH]), refuse_later_writes)
    if every_thread or resources:
        deleted += await _erase_threads(db, threads, resources, every_thread)
    return deleted + await _erase_usage(db, run_ids, threads, resources)


async def is_erased(db: PostgresConnections, run_id: str) -> bool:
    async def op(conn: Conn, attempt: Attempt) -> bool:
        cursor = await conn.execute(_ERASED, (run_id,))
        return await cursor.fetchone() is not None

    return await db.run(op)


async def refuse_if_erased(conn: Conn, run_id: str) -> None:
    """Hold the run's lock shared until the transaction ends and raise ``ErasedRunError`` when ``run_id`` was erased
    on request; call it first in the write's transaction. Two statements, so that the check reads with a snapshot
    taken after the lock is held (one statement's snapshot predates its lock wait), sent together in one round trip
    (a pipeline)."""
    async with conn.pipeline():
        check = await send_erased_check(conn, run_id)
    await refuse_erased(check, run_id)


async def send_erased_check(conn: Conn, run_id: str) -> Cursor:
    """The statements of :func:`refuse_if_erased`, sent without waiting for their answer: a caller in pipeline mode
    reads it with :func:`refuse_erased` in the round trip that brings its own first reads."""
    await conn.execute(_LOCK_SHARED, (_RUN_LOCKS, run_id))
    return await conn.execute(_ERASED, (run_id,))


async def refuse_erased(check: Cursor, run_id: str) -> None:
    """Raise ``ErasedRunError`` when the answer of :func:`send_erased_check` found ``run_id`` erased."""
    if await check.fetchone() is not None:
        raise ErasedRunError(run_id)


async def _erase_runs(db: PostgresConnections, run_ids: list[str], refuse_later_writes: bool) -> int:
    async def op(conn: Conn, attempt: Attempt) -> int:
        async with conn.transaction():
            if refuse_later_writes:
                await conn.execute(_LOCK_ALL, (_RUN_LOCKS, run_ids))
                await conn.execute(_KEEP, (time.time(), run_ids))
            deleted = 0
            for table in (*RUN_TABLES, "journal_head"):
                deleted += await _count(conn, f"DELETE FROM tempo_agents.{table} WHERE run_id = ANY(%s)", (run_ids,))
        return deleted

    return await db.run(op)


async def _erase_usage(
    db: PostgresConnections, run_ids: Sequence[str], threads: Sequence[tuple[str, str]], resources: Sequence[str]
) -> int:
    """Delete the usage counters of the runs, the threads and the resources (every thread of theirs included)."""
    keys, prefixes = usage_scopes(run_ids, threads, resources)
    if not keys:
        return 0

    async def op(conn: Conn, attempt: Attempt) -> int:
        async with conn.transaction():
            deleted = await _count(conn, "DELETE FROM tempo_agents.usage_counters WHERE scope = ANY(%s)", (keys,))
            for prefix in prefixes:
                deleted += await _count(
                    conn, "DELETE FROM tempo_agents.usage_counters WHERE left(scope, %s) = %s", (len(prefix), prefix)
                )
        return deleted

    return await db.run(op)


async def _erase_threads(
    db: PostgresConnections,
    threads: Sequence[tuple[str, str]],
    resources: Sequence[str],
    every_thread: Sequence[tuple[str, str]],
) -> int:
    """Delete the rows of ``threads`` and ``resources``, and the state of ``every_thread`` that has no messages
    left."""

    async def op(conn: Conn, attempt: Attempt) -> int:
        async with conn.transaction():
            deleted = 0
            for thread_id, resource_id in threads:
                for table in RESOURCE_TABLES:
                    deleted += await _count(
                        conn,
                        f"DELETE FROM tempo_agents.{table} WHERE thread_id = %s AND resource_id = %s",
                        (thread_id, resource_id),
                    )
            for resource in resources:
                for table in RESOURCE_TABLES:
                    deleted += await _count(
                        conn, f"DELETE FROM tempo_agents.{table} WHERE resource_id = %s", (resource,)
                    )
            for thread_id in dict.fromkeys(thread_id for thread_id, _ in every_thread):
                deleted += await _count(
                    conn,
                    "DELETE FROM tempo_agents.thread_state WHERE thread_id = %s AND NOT EXISTS "
                    "(SELECT 1 FROM tempo_agents.thread_messages WHERE thread_id = %s)",
                    (thread_id, thread_id),
                )
        return deleted

    return await db.run(op)


async def _threads_of(db: PostgresConnections, resources: Sequence[str]) -> list[tuple[str, str]]:
    async def op(conn: Conn, attempt: Attempt) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for resource in resources:
            cursor = await conn.execute(
                "SELECT DISTINCT thread_id FROM tempo_agents.thread_messages WHERE resource_id = %s", (resource,)
            )
            found.extend((str(row[0]), resource) for row in await cursor.fetchall())
        return found

    return await db.run(op) if resources else []


async def _count(conn: Conn, statement: str, params: tuple[object, ...]) -> int:
    cursor = await conn.execute(statement, params)
    return max(cursor.rowcount, 0)
