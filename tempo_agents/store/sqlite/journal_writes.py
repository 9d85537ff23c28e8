"""Writes of the SQLite store's journal and what is written with it: :func:`record` in one transaction (``BEGIN
IMMEDIATE``: writers take turns), transcripts, and a start counted. They run on the writer thread, each in the
transaction of a group commit (``group_commit.py``) with the writes queued beside it."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from tempo_agents.audit import AuditEntry
from tempo_agents.store import base
from tempo_agents.store.base import ChunkWrite, SavedOutcome, TranscriptEntry, to_json
from tempo_agents.store.chunk_rows import chunk_rows
from tempo_agents.store.sealed_columns import SealedColumns
from tempo_agents.store.sqlite.audit_trail import append_in
from tempo_agents.store.sqlite.connections import SQLiteConnections
from tempo_agents.store.sqlite.erasure import refuse_if_erased
from tempo_agents.store.sqlite.journal_reads import read_outcome
from tempo_agents.store.sqlite.transactions import immediate
from tempo_agents.store.sqlite.waiting_calls import change_waiting

__all__ = ["forget_outcomes_before", "put_transcript", "put_transcript_in", "record", "record_in", "saved_or_counted"]

_CHARGE = """
INSERT INTO usage_counters (scope, period, tokens, cost_nanos) VALUES (?, ?, ?, ?)
ON CONFLICT (scope, period) DO UPDATE
SET tokens = tokens + excluded.tokens, cost_nanos = cost_nanos + excluded.cost_nanos
"""
_NEXT_SEQ = "SELECT COALESCE(MAX(seq), -1) + 1 FROM journal WHERE run_id = ?"
_KEYED_SEQS = "SELECT key, seq FROM journal WHERE run_id = ? AND key IN (SELECT value FROM json_each(?))"
_PUT_CHUNK = """
INSERT INTO journal (run_id, seq, key, body) VALUES (?, ?, ?, ?)
ON CONFLICT (run_id, seq) DO UPDATE SET key = excluded.key, body = excluded.body
"""
"""A chunk at the offset it was given: a keyed chunk already written keeps its offset (its body is sealed bound to
it), every other one goes after the run's last."""

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
        with immediate(db):
            refuse_if_erased(db, run_id)
            if fence is not None:  # writers take turns (BEGIN IMMEDIATE): the count read here is the newest
                counted = read_outcome(db, connections.columns, run_id, fence.counter_key)
                fence.check(run_id, counted)
            columns = connections.columns.now()  # a key source asked once for the whole record
            offsets = record_in(db, columns, run_id, entries, writes, outcome, charges)
            change_waiting(db, columns, run_id, writes, waiting)
            append_in(db, audit)
        return offsets

    return await connections.run_grouped(work)


async def saved_or_counted(
    connections: SQLiteConnections, run_id: str, key: str, counter_key: str
) -> tuple[dict[str, Any] | None, int]:
    def work(db: sqlite3.Connection) -> tuple[dict[str, Any] | None, int]:
        with immediate(db):
            refuse_if_erased(db, run_id)
            saved = read_outcome(db, connections.columns, run_id, key)
            if saved is not None:
                return saved, 0
            counted = read_outcome(db, connections.columns, run_id, counter_key)
            count = 1 + (int(counted["starts"]) if counted is not None else 0)
            record_in(db, connections.columns, run_id, (), (), SavedOutcome(counter_key, {"starts": count}))
        return None, count

    return await connections.run_grouped(work)


async def forget_outcomes_before(connections: SQLiteConnections, run_id: str, key: str) -> None:
    def work(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM outcomes WHERE run_id = ? AND key < ?", (run_id, key))  # TEXT compares by bytes

    await connections.run(work)


async def put_transcript(connections: SQLiteConnections, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
    def work(db: sqlite3.Connection) -> None:
        with immediate(db):
            refuse_if_erased(db, run_id)
            put_transcript_in(db, connections.columns, run_id, entries)

    if entries:
        await connections.run_grouped(work)


def record_in(
    db: sqlite3.Connection,
    columns: SealedColumns,
    run_id: str,
    entries: Sequence[TranscriptEntry],
    writes: Sequence[ChunkWrite],
    outcome: SavedOutcome | None,
    charges: Sequence[base.UsageCharge] = (),
) -> list[int]:
    """The writes of :func:`record`, inside the caller's transaction."""
    put_transcript_in(db, columns, run_id, entries)
    db.executemany(_CHARGE, [(c.scope, c.period, c.tokens, c.cost_nanos) for c in charges])
    if outcome is not None:
        db.execute(
            "INSERT OR REPLACE INTO outcomes (run_id, key, body) VALUES (?, ?, ?)",
            (run_id, outcome.key, columns.seal_outcome(run_id, outcome.key, to_json(outcome.value))),
        )
    return _append_in(db, columns, run_id, writes)


def _append_in(db: sqlite3.Connection, columns: SealedColumns, run_id: str, writes: Sequence[ChunkWrite]) -> list[int]:
    """Append (or replace by key) the chunks, each sealed bound to its offset; returns the offsets."""
    if not writes:
        return []
    next_seq = int(db.execute(_NEXT_SEQ, (run_id,)).fetchone()[0])
    keys = [w.key for w in writes if w.key is not None]
    keyed: dict[str, int] = dict(db.execute(_KEYED_SEQS, (run_id, to_json(keys))).fetchall()) if keys else {}
    placed = chunk_rows(columns, run_id, writes, next_seq, keyed)
    db.executemany(_PUT_CHUNK, placed.rows)
    return placed.offsets


def put_transcript_in(
    db: sqlite3.Connection, columns: SealedColumns, run_id: str, entries: Sequence[TranscriptEntry]
) -> None:
    """Upsert entries under the run's next transcript revision (inside the caller's transaction)."""
    if not entries:
        return
    revision = int(db.execute(_NEXT_REVISION, (run_id,)).fetchone()[0])
    db.executemany(_PUT_TRANSCRIPT, columns.transcript_rows(run_id, entries, revision))
