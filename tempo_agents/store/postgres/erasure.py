"""Erasing runs, threads and resources from the PostgreSQL store, in one transaction."""

from __future__ import annotations

from collections.abc import Sequence

from tempo_agents.store.erasure_tables import RESOURCE_TABLES, RUN_TABLES
from tempo_agents.store.postgres.connections import Conn, PostgresConnections
from tempo_agents.store.postgres.failures import Attempt

__all__ = ["erase"]


async def erase(
    db: PostgresConnections,
    run_ids: Sequence[str],
    threads: Sequence[tuple[str, str]],
    resources: Sequence[str],
) -> int:
    """Delete every row of ``run_ids``, ``threads`` (thread id, resource id) and ``resources``; how many went.
    Deleted rows leave PostgreSQL's tables at once; their space is reclaimed by the next vacuum."""

    async def op(conn: Conn, attempt: Attempt) -> int:
        async with conn.transaction():
            every_thread = [
                *threads,
                *await _threads_of(conn, resources),
            ]  # found before their rows go, for their state
            deleted = await _delete_runs(conn, run_ids)
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


async def _threads_of(conn: Conn, resources: Sequence[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for resource in resources:
        cursor = await conn.execute(
            "SELECT DISTINCT thread_id FROM tempo_agents.thread_messages WHERE resource_id = %s", (resource,)
        )
        found.extend((str(row[0]), resource) for row in await cursor.fetchall())
    return found


async def _delete_runs(conn: Conn, run_ids: Sequence[str]) -> int:
    if not run_ids:
        return 0
    deleted = 0
    for table in (*RUN_TABLES, "journal_head"):
        deleted += await _count(conn, f"DELETE FROM tempo_agents.{table} WHERE run_id = ANY(%s)", (list(run_ids),))
    return deleted


async def _count(conn: Conn, statement: str, params: tuple[object, ...]) -> int:
    cursor = await conn.execute(statement, params)
    return max(cursor.rowcount, 0)
