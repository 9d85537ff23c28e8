"""The PostgreSQL store's memory threads (the messages of each run on a thread, in the order runs wrote them) and
thread state (one value per thread and type)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tempo_agents.store.base import to_json
from tempo_agents.store.postgres.connections import Conn, PostgresConnections
from tempo_agents.store.postgres.erasure import refuse_if_erased
from tempo_agents.store.postgres.failures import Attempt
from tempo_agents.store.sealed_columns import THREAD_STATE

__all__ = [
    "append_thread_messages",
    "get_thread_messages",
    "get_thread_state",
    "remove_run_from_thread",
    "set_thread_state",
    "thread_messages_after",
]


async def append_thread_messages(
    db: PostgresConnections, thread_id: str, resource_id: str, run_id: str, messages: Sequence[dict[str, Any]]
) -> None:
    async def op(conn: Conn, attempt: Attempt) -> None:
        async with conn.transaction(), conn.cursor() as cursor:
            await refuse_if_erased(conn, run_id)
            where = "thread_id = %s AND resource_id = %s"
            await cursor.execute(
                f"SELECT idx, created FROM tempo_agents.thread_messages WHERE {where} AND run_id = %s",
                (thread_id, resource_id, run_id),
            )
            kept: dict[int, int] = {idx: created for idx, created in await cursor.fetchall()}
            last = max(kept.values(), default=None)
            later = None
            if last is not None:
                await cursor.execute(
                    f"SELECT 1 FROM tempo_agents.thread_messages WHERE {where} AND created > %s AND run_id <> %s "
                    "LIMIT 1",
                    (thread_id, resource_id, last, run_id),
                )
                later = await cursor.fetchone()
            if last is None or later is not None:
                await cursor.execute("SELECT nextval('tempo_agents.thread_messages_created')")
                row = await cursor.fetchone()
                assert row is not None
                fresh = int(row[0])
            else:
                fresh = last
            bodies = db.columns.thread_message_bodies(thread_id, resource_id, run_id, messages)
            await cursor.executemany(
                "INSERT INTO tempo_agents.thread_messages (thread_id, resource_id, run_id, idx, created, body) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (thread_id, resource_id, run_id, idx) "
                "DO UPDATE SET body = excluded.body",
                [(thread_id, resource_id, run_id, i, kept.get(i, fresh), body) for i, body in enumerate(bodies)],
            )

    if messages:
        await db.run(op)


async def remove_run_from_thread(db: PostgresConnections, thread_id: str, resource_id: str, run_id: str) -> int:
    async def op(conn: Conn, attempt: Attempt) -> int:
        cursor = await conn.execute(
            "DELETE FROM tempo_agents.thread_messages WHERE thread_id = %s AND resource_id = %s AND run_id = %s",
            (thread_id, resource_id, run_id),
        )
        return int(cursor.rowcount)

    return await db.run(op)


async def get_thread_messages(db: PostgresConnections, thread_id: str, resource_id: str) -> list[dict[str, Any]]:
    async def op(conn: Conn, attempt: Attempt) -> list[dict[str, Any]]:
        cursor = await conn.execute(
            "SELECT run_id, idx, body FROM tempo_agents.thread_messages WHERE thread_id = %s AND resource_id = %s "
            "ORDER BY created, idx",
            (thread_id, resource_id),
        )
        return db.columns.opened_thread_messages(thread_id, resource_id, await cursor.fetchall())

    return await db.run(op)


async def thread_messages_after(
    db: PostgresConnections, thread_id: str, resource_id: str, run_id: str
) -> list[dict[str, Any]]:
    async def op(conn: Conn, attempt: Attempt) -> list[dict[str, Any]]:
        cursor = await conn.execute(
            "SELECT run_id, idx, body FROM tempo_agents.thread_messages WHERE thread_id = %s AND resource_id = %s "
            "AND run_id <> %s AND created > (SELECT COALESCE(MAX(created), 0) FROM tempo_agents.thread_messages "
            "WHERE thread_id = %s AND resource_id = %s AND run_id = %s) ORDER BY created, idx",
            (thread_id, resource_id, run_id, thread_id, resource_id, run_id),
        )
        return db.columns.opened_thread_messages(thread_id, resource_id, await cursor.fetchall())

    return await db.run(op)


async def get_thread_state(db: PostgresConnections, thread_id: str, state_type: str) -> Any | None:
    async def op(conn: Conn, attempt: Attempt) -> Any | None:
        cursor = await conn.execute(
            "SELECT body FROM tempo_agents.thread_state WHERE thread_id = %s AND type = %s",
            (thread_id, state_type),
        )
        row = await cursor.fetchone()
        return (
            None if row is None else json.loads(db.columns.open(THREAD_STATE, "body", (thread_id, state_type), row[0]))
        )

    return await db.run(op)


async def set_thread_state(
    db: PostgresConnections, thread_id: str, state_type: str, value: Any, run_id: str | None
) -> None:
    async def op(conn: Conn, attempt: Attempt) -> None:
        async with conn.transaction():
            if run_id is not None:
                await refuse_if_erased(conn, run_id)
            sealed = db.columns.seal(THREAD_STATE, "body", (thread_id, state_type), to_json(value))
            await conn.execute(
                "INSERT INTO tempo_agents.thread_state (thread_id, type, body) VALUES (%s, %s, %s) "
                "ON CONFLICT (thread_id, type) DO UPDATE SET body = excluded.body",
                (thread_id, state_type, sealed),
            )

    await db.run(op)
