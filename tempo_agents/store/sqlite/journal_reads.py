"""Reads of the SQLite store's journal and what is written with it: chunks and their offsets, saved outcomes,
usage counters and transcript changes. They run on the reader thread, except a run's newest chunks, which a tail
reads on its own thread (``read_chunks``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from tempo_agents.store.base import JournalEntry, TranscriptEntry
from tempo_agents.store.sealed_columns import JOURNAL, SealedColumns
from tempo_agents.store.sqlite.connections import SQLiteConnections

__all__ = [
    "OUTCOME",
    "READ_HERE_ROWS",
    "offset_of",
    "read_chunks",
    "read_outcome",
    "saved_outcome",
    "transcript_changes",
    "usage_counters",
]

OUTCOME = "SELECT body FROM outcomes WHERE run_id = ? AND key = ?"
"""A run's saved outcome under a key."""

_TRANSCRIPT_COLUMNS = "step, part, position, body, memory_body"


def read_outcome(db: sqlite3.Connection, columns: SealedColumns, run_id: str, key: str) -> dict[str, Any] | None:
    """A run's saved outcome under a key, opened, or ``None`` (inside the caller's transaction, if any)."""
    row = db.execute(OUTCOME, (run_id, key)).fetchone()
    return None if row is None else columns.opened_outcome(run_id, key, row[0])


READ_HERE_ROWS = 64
"""How many chunks ``read_chunks`` reads on the caller's thread (``SQLiteConnections.read_here``) before it reads
the rest on the reader thread: a live tail's read is a few rows; a reader catching up on a long journal hands the
bulk of it to the reader thread."""


async def read_chunks(connections: SQLiteConnections, run_id: str, offset: int, limit: int) -> list[JournalEntry]:
    await connections.ready()  # the writer creates the schema first
    first = min(limit, READ_HERE_ROWS)
    try:
        entries = connections.read_here(lambda db: _chunks(db, connections.columns, run_id, offset, first))
    except sqlite3.OperationalError:  # the file is busy: wait for it on the reader thread, not on the event loop
        return await connections.read(lambda db: _chunks(db, connections.columns, run_id, offset, limit))
    if len(entries) < first or first == limit:
        return entries
    after = entries[-1].offset + 1
    rest = limit - first
    return entries + await connections.read(lambda db: _chunks(db, connections.columns, run_id, after, rest))


def _chunks(db: sqlite3.Connection, columns: SealedColumns, run_id: str, offset: int, limit: int) -> list[JournalEntry]:
    rows = db.execute(
        "SELECT seq, body FROM journal WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?", (run_id, offset, limit)
    ).fetchall()
    opened = columns.now().open
    return [
        JournalEntry(offset=int(seq), chunk=json.loads(opened(JOURNAL, "body", (run_id, seq), body)))
        for seq, body in rows
    ]


async def offset_of(connections: SQLiteConnections, run_id: str, key: str) -> int | None:
    def work(db: sqlite3.Connection) -> int | None:
        row = db.execute("SELECT seq FROM journal WHERE run_id = ? AND key = ?", (run_id, key)).fetchone()
        return None if row is None else int(row[0])

    return await connections.read(work)


async def usage_counters(
    connections: SQLiteConnections, counters: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], tuple[int, int]]:
    def work(db: sqlite3.Connection) -> dict[tuple[str, str], tuple[int, int]]:
        found: dict[tuple[str, str], tuple[int, int]] = {}
        for scope, period in counters:
            row = db.execute(
                "SELECT tokens, cost_nanos FROM usage_counters WHERE scope = ? AND period = ?", (scope, period)
            ).fetchone()
            if row is not None:
                found[(scope, period)] = (int(row[0]), int(row[1]))
        return found

    return await connections.read(work) if counters else {}


async def saved_outcome(connections: SQLiteConnections, run_id: str, key: str) -> dict[str, Any] | None:
    def work(db: sqlite3.Connection) -> dict[str, Any] | None:
        return read_outcome(db, connections.columns, run_id, key)

    return await connections.read(work)


async def transcript_changes(
    connections: SQLiteConnections, run_id: str, after_revision: int
) -> tuple[list[TranscriptEntry], int]:
    def work(db: sqlite3.Connection) -> tuple[list[TranscriptEntry], int]:
        db.execute("BEGIN")
        try:
            row = db.execute("SELECT revision FROM transcript_revision WHERE run_id = ?", (run_id,)).fetchone()
            rows = db.execute(
                f"SELECT {_TRANSCRIPT_COLUMNS} FROM transcript WHERE run_id = ? AND revision > ? "
                "ORDER BY step, position, part",
                (run_id, after_revision if row is not None and after_revision > 0 else -1),
            ).fetchall()
        finally:
            db.execute("COMMIT")
        columns = connections.columns.now()
        entries = [columns.transcript_entry(run_id, *row) for row in rows]
        return entries, 0 if row is None else int(row[0])

    return await connections.read(work)
