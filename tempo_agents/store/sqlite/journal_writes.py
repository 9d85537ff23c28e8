"""Writes of the SQLite store's journal and what is written with it: :func:`record` in one transaction (``BEGIN
IMMEDIATE``: writers take turns), transcripts, and a start counted. They run on the writer thread."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from tempo_agents.audit import AuditEntry
from tempo_agents.store import base
from tempo_agents.store.base import ChunkWrite, SavedOutcome, TranscriptEntry, to_json, transcript_rows
from tempo_agents.store.sqlite.audit_trail import append_in
from tempo_agents.store.sqlite.connections import SQLiteConnections
from tempo_agents.store.sqlite.journal_reads import OUTCOME
from tempo_agents.store.sqlite.waiting_calls import change_waiting

__all__ = ["put_transcript", "put_transcript_in", "record", "record_in", "saved_or_counted"]

_CHARGE = """
INSERT INTO usage_counters (scope, period, tokens, cost_nanos) VALUES (?, ?, ?, ?)
ON CONFLICT (scope, period) DO UPDATE
SET tokens = tokens + excluded.tokens, cost_nanos = cost_nanos + excluded.cost_nanos
"""
_APPEND = """
INSERT INTO journal (run_id, seq, key, body)
VALUES (?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM journal WHERE run_id = ?), ?, ?)
ON CONFLICT (run_id, key) DO UPDATE SET body = excluded.body
RETURNING seq
"""

_NEXT_REVISION = """
INSERT INTO transcript_revision (run_id, revision) VALUES (?, 1)
ON CONFLICT (run_id) DO UPDATE SET revision = revision + 1
RETURNING revision
"""

_PUT_TRANSCRIPT = """
INSERT INTO transcript (run_id, step, part, position, body, memory_body, revision) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id, step, part) DO UPDATE SET
    position = excluded.position, body = excluded.body, memory_body = excluded.memory_body,
    revision = excluded.revision
"""


async def record(
    connections: SQLiteConnections,
    run_id: str,
    entries: Sequence[TranscriptEntry],
    writes: Sequence[ChunkWrite],
    outcome: SavedOutcome | None,
    waiting: base.WaitingChange | None,
    charges: Sequence[base.UsageCharge],
    fence: base.StartFence | None,
    audit: Sequence[AuditEntry] = (),
) -> list[int]:
    """:meth:`~tempo_agents.store.base.Store.record` in one transaction; returns the chunks' offsets."""

    def work(db: sqlite3.Connection) -> list[int]:
        db.execute("BEGIN IMMEDIATE")
        try:
            if fence is not None:  # writers take turns (BEGIN IMMEDIATE): the count read here is the newest
                counted = db.execute(OUTCOME, (run_id, fence.counter_key)).fetchone()
                fence.check(run_id, None if counted is None else json.loads(counted[0]))
            offsets = record_in(db, run_id, entries, writes, outcome, charges)
            change_waiting(db, run_id, writes, waiting)
            append_in(db, audit)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return offsets

    return await connections.run(work)


async def saved_or_counted(
    connections: SQLiteConnections, run_id: str, key: str, counter_key: str
) -> tuple[dict[str, Any] | None, int]:
    def work(db: sqlite3.Connection) -> tuple[dict[str, Any] | None, int]:
        db.execute("BEGIN IMMEDIATE")
        try:
            saved = db.execute(OUTCOME, (run_id, key)).fetchone()
            if saved is not None:
                db.execute("COMMIT")
                return dict(json.loads(saved[0])), 0
            counted = db.execute(OUTCOME, (run_id, counter_key)).fetchone()
            count = 1 + (int(json.loads(counted[0])["starts"]) if counted is not None else 0)
            record_in(db, run_id, (), (), SavedOutcome(counter_key, {"starts": count}))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return None, count

    return await connections.run(work)


async def put_transcript(connections: SQLiteConnections, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
    def work(db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            put_transcript_in(db, run_id, entries)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    if entries:
        await connections.run(work)


def record_in(
    db: sqlite3.Connection,
    run_id: str,
    entries: Sequence[TranscriptEntry],
    writes: Sequence[ChunkWrite],
    outcome: SavedOutcome | None,
    charges: Sequence[base.UsageCharge] = (),
) -> list[int]:
    """The writes of :func:`record`, inside the caller's transaction."""
    put_transcript_in(db, run_id, entries)
    db.executemany(_CHARGE, [(c.scope, c.period, c.tokens, c.cost_nanos) for c in charges])
    if outcome is not None:
        db.execute(
            "INSERT OR REPLACE INTO outcomes (run_id, key, body) VALUES (?, ?, ?)",
            (run_id, outcome.key, to_json(outcome.value)),
        )
    return [int(db.execute(_APPEND, (run_id, run_id, w.key, to_json(w.chunk))).fetchone()[0]) for w in writes]


def put_transcript_in(db: sqlite3.Connection, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
    """Upsert entries under the run's next transcript revision (inside the caller's transaction)."""
    if not entries:
        return
    revision = int(db.execute(_NEXT_REVISION, (run_id,)).fetchone()[0])
    db.executemany(
        _PUT_TRANSCRIPT,
        transcript_rows(run_id, entries, revision),
    )
