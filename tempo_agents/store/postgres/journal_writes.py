"""Writes of the PostgreSQL store's journal: :func:`record`, one transaction per write, and a start counted.

Each run has a row in ``journal_head`` holding its next offset. An append locks that row first (``INSERT ... ON
CONFLICT DO UPDATE ... RETURNING``), so appends to one run from any number of processes or hosts take turns:
offsets stay contiguous, a keyed chunk is found (and replaced in place) by the writer that holds the lock, and an
offset is visible to readers only after every smaller one is. Appends to different runs never wait for each other.
A tool result, its chunk and its saved outcome commit together or not at all; a writer killed mid-transaction leaves
nothing behind (the server rolls it back and releases the lock). Every append ends with a ``pg_notify`` on
:data:`~tempo_agents.store.postgres.listener.CHANNEL` inside its transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tempo_agents.audit import AuditEntry
from tempo_agents.store.base import (
    ChunkWrite,
    SavedOutcome,
    StartFence,
    TranscriptEntry,
    UsageCharge,
    WaitingChange,
    to_json,
)
from tempo_agents.store.chunk_rows import chunk_rows
from tempo_agents.store.postgres.audit_trail import append_in
from tempo_agents.store.postgres.connections import Conn, Cursor, PostgresConnections
from tempo_agents.store.postgres.erasure import refuse_erased, refuse_if_erased, send_erased_check
from tempo_agents.store.postgres.failures import Attempt
from tempo_agents.store.postgres.journal_reads import OUTCOME
from tempo_agents.store.postgres.listener import CHANNEL
from tempo_agents.store.postgres.pipelined import pipelined_transaction
from tempo_agents.store.postgres.waiting_calls import change_waiting
from tempo_agents.store.sealed_columns import SealedColumns

__all__ = ["RecordReads", "forget_outcomes_before", "record", "record_in", "saved_or_counted"]

_FENCE = OUTCOME + " FOR SHARE"
"""A start's count read by the writes it fences (``StartFence``), locked until they commit."""
_CHARGE = """
INSERT INTO tempo_agents.usage_counters AS u (scope, period, tokens, cost_nanos) VALUES (%s, %s, %s, %s)
ON CONFLICT (scope, period) DO UPDATE
SET tokens = u.tokens + excluded.tokens, cost_nanos = u.cost_nanos + excluded.cost_nanos
"""
"""Adds to a usage counter; charges are sorted by their key, so two transactions lock counter rows in one order."""
_COUNT_START = """
INSERT INTO tempo_agents.outcomes AS o (run_id, key, body) VALUES (%s, %s, '{"starts": 1}')
ON CONFLICT (run_id, key) DO UPDATE SET body = json_build_object('starts', (o.body::json->>'starts')::int + 1)::text
RETURNING body
"""
_LOCK_HEAD = """
INSERT INTO tempo_agents.journal_head (run_id, next_seq) VALUES (%s, 0)
ON CONFLICT (run_id) DO UPDATE SET next_seq = tempo_agents.journal_head.next_seq
RETURNING next_seq
"""
"""The run's next offset, with its row locked until the transaction ends (appends to a run take turns)."""

_PUT_CHUNK = """
INSERT INTO tempo_agents.journal (run_id, seq, key, body) VALUES (%s, %s, %s, %s)
ON CONFLICT (run_id, seq) DO UPDATE SET key = excluded.key, body = excluded.body
"""

_KEYED = "SELECT key, seq FROM tempo_agents.journal WHERE run_id = %s AND key = ANY(%s)"

_ADVANCE_AND_NOTIFY = """
WITH advanced AS (UPDATE tempo_agents.journal_head SET next_seq = %s WHERE run_id = %s)
SELECT pg_notify(%s, %s)
"""
"""Move the run's next offset past the chunks written and tell listeners, who hear of it once committed."""

_NEXT_REVISION = """
INSERT INTO tempo_agents.transcript_revision (run_id, revision) VALUES (%s, 1)
ON CONFLICT (run_id) DO UPDATE SET revision = tempo_agents.transcript_revision.revision + 1
RETURNING revision
"""

_PUT_TRANSCRIPT = """
INSERT INTO tempo_agents.transcript (run_id, step, part, position, body, memory_body, revision)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id, step, part) DO UPDATE SET
    position = excluded.position, body = excluded.body, memory_body = excluded.memory_body,
    revision = excluded.revision
"""


async def record(
    db: PostgresConnections,
    run_id: str,
    entries: Sequence[TranscriptEntry],
    writes: Sequence[ChunkWrite],
    outcome: SavedOutcome | None,
    waiting: WaitingChange | None,
    charges: Sequence[UsageCharge],
    fence: StartFence | None,
    audit: Sequence[AuditEntry] = (),
) -> tuple[list[int], int]:
    """:meth:`~tempo_agents.store.base.Store.record` in one transaction; returns the chunks' offsets and the run's
    last offset (-1 without chunks). Tried again in place only when repeating it is harmless: no usage charges,
    every chunk keyed.

    Two round trips (``pipelined_transaction``): every lock and read first (the run's erasure lock, a fenced
    start's count, the run's offset row, the keys' offsets, the transcript's revision), then every write with the
    commit. A write that must not be repeated takes three: it waits for its writes before it sends the commit, so
    that a connection lost before then is known not to have committed."""
    repeatable = not charges and not audit and all(w.key is not None for w in writes)

    async def op(conn: Conn, attempt: Attempt) -> tuple[list[int], int]:
        async with pipelined_transaction(conn) as pipeline:
            erased = await send_erased_check(conn, run_id)
            # FOR SHARE: a start being counted (it updates this row) and these writes take turns, and
            # the count read is the newest committed one.
            counted = None if fence is None else await conn.execute(_FENCE, (run_id, fence.counter_key))
            reads = await RecordReads.send(conn, run_id, entries, writes)
            await refuse_erased(erased, run_id)  # the first round trip: everything above
            if fence is not None and counted is not None:
                row = await counted.fetchone()
                fence.check(run_id, None if row is None else json.loads(row[0]))  # a count: in clear
            columns = db.columns.now()  # a key source asked once for the whole record
            done = await record_in(conn, columns, run_id, reads, entries, writes, outcome, charges)
            await change_waiting(conn, columns, run_id, writes, waiting)
            await append_in(conn, audit)  # the chain's head last: every writer takes its locks in one order
            if not repeatable:
                await pipeline.sync()
            attempt.committing = True
        return done

    return await db.run(op, idempotent=repeatable)


async def saved_or_counted(
    db: PostgresConnections, run_id: str, key: str, counter_key: str
) -> tuple[dict[str, Any] | None, int]:
    """The outcome saved under ``key``, or else the start counted under ``counter_key`` (never tried twice)."""

    async def op(conn: Conn, attempt: Attempt) -> tuple[dict[str, Any] | None, int]:
        async with conn.transaction():
            await refuse_if_erased(conn, run_id)
            cursor = await conn.execute(OUTCOME, (run_id, key))
            saved = await cursor.fetchone()
            if saved is not None:
                return db.columns.opened_outcome(run_id, key, saved[0]), 0
            cursor = await conn.execute(_COUNT_START, (run_id, counter_key))
            counted = await cursor.fetchone()
            assert counted is not None
            attempt.committing = True
        return None, int(json.loads(counted[0])["starts"])

    return await db.run(op, idempotent=False)


async def forget_outcomes_before(db: PostgresConnections, run_id: str, key: str) -> None:
    async def op(conn: Conn, attempt: Attempt) -> None:
        await conn.execute(
            'DELETE FROM tempo_agents.outcomes WHERE run_id = %s AND key COLLATE "C" < %s', (run_id, key)
        )  # byte order, whatever the database's collation

    await db.run(op)


class RecordReads:
    """The reads of a record, sent before its writes (the run's offset row locked first, then the transcript's
    revision row: the same order in every write, so two writers never wait for each other in a cycle) and read
    once the first round trip brought them."""

    __slots__ = ("found", "head", "revision")

    def __init__(self, head: Cursor | None, found: Cursor | None, revision: Cursor | None) -> None:
        self.head, self.found, self.revision = head, found, revision

    @classmethod
    async def send(
        cls, conn: Conn, run_id: str, entries: Sequence[TranscriptEntry], writes: Sequence[ChunkWrite]
    ) -> RecordReads:
        keys = [w.key for w in writes if w.key is not None]
        head = await conn.execute(_LOCK_HEAD, (run_id,)) if writes else None
        # after the lock is held: no other writer of this run can add one of these keys meanwhile
        found = await conn.execute(_KEYED, (run_id, keys)) if keys else None
        revision = await conn.execute(_NEXT_REVISION, (run_id,)) if entries else None
        return cls(head, found, revision)


async def record_in(
    conn: Conn,
    columns: SealedColumns,
    run_id: str,
    reads: RecordReads,
    entries: Sequence[TranscriptEntry],
    writes: Sequence[ChunkWrite],
    outcome: SavedOutcome | None,
    charges: Sequence[UsageCharge] = (),
) -> tuple[list[int], int]:
    """The writes of :func:`record` inside the caller's transaction, after ``reads``; returns the chunks' offsets
    and the run's last offset (-1 without chunks)."""
    cursor = conn.cursor()
    if reads.revision is not None:
        row = await reads.revision.fetchone()
        assert row is not None
        await cursor.executemany(_PUT_TRANSCRIPT, columns.transcript_rows(run_id, entries, int(row[0])))
    if outcome is not None:
        await cursor.execute(
            "INSERT INTO tempo_agents.outcomes (run_id, key, body) VALUES (%s, %s, %s) "
            "ON CONFLICT (run_id, key) DO UPDATE SET body = excluded.body",
            (run_id, outcome.key, columns.seal_outcome(run_id, outcome.key, to_json(outcome.value))),
        )
    if charges:  # after the run's offset row: every writer locks its run first, then counters in key order
        await cursor.executemany(_CHARGE, sorted((c.scope, c.period, c.tokens, c.cost_nanos) for c in charges))
    if reads.head is None:
        return [], -1
    row = await reads.head.fetchone()
    assert row is not None
    keyed: dict[str, int] = {} if reads.found is None else {k: int(q) for k, q in await reads.found.fetchall()}
    placed = chunk_rows(columns, run_id, writes, int(row[0]), keyed)
    await cursor.executemany(_PUT_CHUNK, placed.rows)
    last = placed.next_offset - 1
    await cursor.execute(_ADVANCE_AND_NOTIFY, (placed.next_offset, run_id, CHANNEL, f"{last} {run_id}"))
    return placed.offsets, last
