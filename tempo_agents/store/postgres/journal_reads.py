"""Reads of the PostgreSQL store's journal and what is written with it: chunks and their offsets, saved outcomes,
usage counters and transcript changes. Each runs on a pooled connection through
:meth:`~tempo_agents.store.postgres.connections.PostgresConnections.run`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tempo_agents.store.base import JournalEntry, TranscriptEntry
from tempo_agents.store.postgres.connections import Conn, PostgresConnections
from tempo_agents.store.postgres.failures import Attempt
from tempo_agents.store.sealed_columns import JOURNAL

__all__ = [
    "OUTCOME",
    "latest_offset",
    "offset_of",
    "read_chunks",
    "saved_outcome",
    "transcript_changes",
    "usage_counters",
]

OUTCOME = "SELECT body FROM tempo_agents.outcomes WHERE run_id = %s AND key = %s"
"""A run's saved outcome under a key."""

_TRANSCRIPT_CHANGES = """
SELECT rev.revision, t.step, t.part, t.position, t.body, t.memory_body
FROM (SELECT (SELECT revision FROM tempo_agents.transcript_revision WHERE run_id = %(run)s) AS revision) rev
LEFT JOIN tempo_agents.transcript t
    ON t.run_id = %(run)s
    AND t.revision > CASE WHEN rev.revision IS NOT NULL AND %(after)s > 0 THEN %(after)s ELSE -1 END
ORDER BY t.step, t.position, t.part
"""
"""One statement, so one snapshot: the revision returned covers exactly the rows returned."""


async def read_chunks(db: PostgresConnections, run_id: str, offset: int, limit: int) -> list[JournalEntry]:
    async def op(conn: Conn, attempt: Attempt) -> list[JournalEntry]:
        cursor = await conn.execute(
            "SELECT seq, body FROM tempo_agents.journal WHERE run_id = %s AND seq >= %s ORDER BY seq LIMIT %s",
            (run_id, offset, limit),
        )
        opened = db.columns.now().open
        return [
            JournalEntry(offset=int(seq), chunk=json.loads(opened(JOURNAL, "body", (run_id, seq), body)))
            for seq, body in await cursor.fetchall()
        ]

    return await db.run(op)


async def offset_of(db: PostgresConnections, run_id: str, key: str) -> int | None:
    async def op(conn: Conn, attempt: Attempt) -> int | None:
        cursor = await conn.execute(
            "SELECT seq FROM tempo_agents.journal WHERE run_id = %s AND key = %s", (run_id, key)
        )
        row = await cursor.fetchone()
        return None if row is None else int(row[0])

    return await db.run(op)


async def latest_offset(db: PostgresConnections, run_id: str) -> int:
    """The run's last offset, -1 before its first chunk."""

    async def op(conn: Conn, attempt: Attempt) -> int:
        cursor = await conn.execute("SELECT next_seq FROM tempo_agents.journal_head WHERE run_id = %s", (run_id,))
        row = await cursor.fetchone()
        return -1 if row is None else int(row[0]) - 1

    return await db.run(op)


async def usage_counters(
    db: PostgresConnections, counters: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], tuple[int, int]]:
    async def op(conn: Conn, attempt: Attempt) -> dict[tuple[str, str], tuple[int, int]]:
        cursor = await conn.execute(
            "SELECT scope, period, tokens, cost_nanos FROM tempo_agents.usage_counters "
            "WHERE (scope, period) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            ([scope for scope, _ in counters], [period for _, period in counters]),
        )
        return {(scope, period): (int(t), int(c)) for scope, period, t, c in await cursor.fetchall()}

    return await db.run(op) if counters else {}


async def saved_outcome(db: PostgresConnections, run_id: str, key: str) -> dict[str, Any] | None:
    async def op(conn: Conn, attempt: Attempt) -> dict[str, Any] | None:
        cursor = await conn.execute(OUTCOME, (run_id, key))
        row = await cursor.fetchone()
        return None if row is None else db.columns.opened_outcome(run_id, key, row[0])

    return await db.run(op)


async def transcript_changes(
    db: PostgresConnections, run_id: str, after_revision: int
) -> tuple[list[TranscriptEntry], int]:
    async def op(conn: Conn, attempt: Attempt) -> tuple[list[TranscriptEntry], int]:
        cursor = await conn.execute(_TRANSCRIPT_CHANGES, {"run": run_id, "after": after_revision})
        rows = await cursor.fetchall()
        revision = 0 if not rows or rows[0][0] is None else int(rows[0][0])
        columns = db.columns.now()
        entries = [columns.transcript_entry(run_id, *row[1:]) for row in rows if row[1] is not None]
        return entries, revision

    return await db.run(op)
