"""The SQLite store's memory threads (the messages of each run on a thread, in the order runs wrote them) and
thread state (one value per thread and type)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from tempo_agents.store.base import to_json
from tempo_agents.store.sealed_columns import THREAD_STATE
from tempo_agents.store.sqlite.connections import SQLiteConnections
from tempo_agents.store.sqlite.erasure import refuse_if_erased
from tempo_agents.store.sqlite.transactions import immediate

__all__ = [
    "append_thread_messages",
    "get_thread_messages",
    "get_thread_state",
    "remove_run_from_thread",
    "set_thread_state",
    "thread_messages_after",
]


async def append_thread_messages(
    connections: SQLiteConnections, thread_id: str, resource_id: str, run_id: str, messages: Sequence[dict[str, Any]]
) -> None:
    def work(db: sqlite3.Connection) -> None:
        with immediate(db):
            refuse_if_erased(db, run_id)
            where = "thread_id = ? AND resource_id = ?"
            kept = dict(
                db.execute(
                    f"SELECT idx, created FROM thread_messages WHERE {where} AND run_id = ?",
                    (thread_id, resource_id, run_id),
                ).fetchall()
            )
            last = max(kept.values(), default=None)
            later = (
                last is not None
                and db.execute(
                    f"SELECT 1 FROM thread_messages WHERE {where} AND created > ? AND run_id <> ? LIMIT 1",
                    (thread_id, resource_id, last, run_id),
                ).fetchone()
            )
            if last is None or later:
                fresh = db.execute("SELECT COALESCE(MAX(created), 0) + 1 FROM thread_messages").fetchone()[0]
            else:
                fresh = last
            bodies = connections.columns.thread_message_bodies(thread_id, resource_id, run_id, messages)
            db.executemany(
                "INSERT OR REPLACE INTO thread_messages (thread_id, resource_id, run_id, idx, created, body) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(thread_id, resource_id, run_id, i, kept.get(i, fresh), body) for i, body in enumerate(bodies)],
            )

    await connections.run(work)


async def remove_run_from_thread(connections: SQLiteConnections, thread_id: str, resource_id: str, run_id: str) -> int:
    def work(db: sqlite3.Connection) -> int:
        cursor = db.execute(
            "DELETE FROM thread_messages WHERE thread_id = ? AND resource_id = ? AND run_id = ?",
            (thread_id, resource_id, run_id),
        )
        return int(cursor.rowcount)

    return await connections.run(work)


async def get_thread_messages(connections: SQLiteConnections, thread_id: str, resource_id: str) -> list[dict[str, Any]]:
    def work(db: sqlite3.Connection) -> list[dict[str, Any]]:
        rows = db.execute(
            "SELECT run_id, idx, body FROM thread_messages WHERE thread_id = ? AND resource_id = ? "
            "ORDER BY created, idx",
            (thread_id, resource_id),
        ).fetchall()
        return connections.columns.opened_thread_messages(thread_id, resource_id, rows)

    return await connections.read(work)


async def thread_messages_after(
    connections: SQLiteConnections, thread_id: str, resource_id: str, run_id: str
) -> list[dict[str, Any]]:
    def work(db: sqlite3.Connection) -> list[dict[str, Any]]:
        rows = db.execute(
            "SELECT run_id, idx, body FROM thread_messages WHERE thread_id = ? AND resource_id = ? AND run_id <> ? AND "
            "created > (SELECT COALESCE(MAX(created), 0) FROM thread_messages "
            "WHERE thread_id = ? AND resource_id = ? AND run_id = ?) ORDER BY created, idx",
            (thread_id, resource_id, run_id, thread_id, resource_id, run_id),
        ).fetchall()
        return connections.columns.opened_thread_messages(thread_id, resource_id, rows)

    return await connections.read(work)


async def get_thread_state(connections: SQLiteConnections, thread_id: str, state_type: str) -> Any | None:
    def work(db: sqlite3.Connection) -> Any | None:
        row = db.execute(
            "SELECT body FROM thread_state WHERE thread_id = ? AND type = ?", (thread_id, state_type)
        ).fetchone()
        return (
            None
            if row is None
            else json.loads(connections.columns.open(THREAD_STATE, "body", (thread_id, state_type), row[0]))
        )

    return await connections.read(work)


async def set_thread_state(
    connections: SQLiteConnections, thread_id: str, state_type: str, value: Any, run_id: str | None
) -> None:
    def work(db: sqlite3.Connection) -> None:
        with immediate(db):
            if run_id is not None:
                refuse_if_erased(db, run_id)
            db.execute(
                "INSERT INTO thread_state (thread_id, type, body) VALUES (?, ?, ?) "
                "ON CONFLICT (thread_id, type) DO UPDATE SET body = excluded.body",
                (
                    thread_id,
                    state_type,
                    connections.columns.seal(THREAD_STATE, "body", (thread_id, state_type), to_json(value)),
                ),
            )

    await connections.run(work)
