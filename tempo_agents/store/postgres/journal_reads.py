"""Reads of the PostgreSQL store's journal and what is written with it: chunks and their offsets, saved outcomes,
usage counters and transcript changes. Each runs on a pooled connection through
:meth:`~tempo_agents.store.postgres.connections.PostgresConnections.run`.

The chunk reads that one turn of the event loop asks for are made together (:class:`ChunkReads`): when commits to
many runs wake their tails at once, each tail asks for its run's new chunks, and the process sends one query for
all of them instead of one a run, so the database answers a query a wake-up, not a query a run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from tempo_agents.store.base import JournalEntry, TranscriptEntry
from tempo_agents.store.postgres.connections import Conn, PostgresConnections
from tempo_agents.store.postgres.failures import Attempt
from tempo_agents.store.sealed_columns import JOURNAL

__all__ = [
    "OUTCOME",
    "ChunkReads",
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
        return _entries(db, run_id, await cursor.fetchall())

    return await db.run(op)


_READS_TOGETHER = """
SELECT w.i, j.seq, j.body
FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) WITH ORDINALITY AS w(run_id, after, most, i)
CROSS JOIN LATERAL (
    SELECT seq, body FROM tempo_agents.journal
    WHERE run_id = w.run_id AND seq >= w.after ORDER BY seq LIMIT w.most
) AS j
ORDER BY w.i, j.seq
"""
"""Several reads in one statement: per read (run, first offset, limit; numbered from 1), its rows in order."""


class _Read(NamedTuple):
    run_id: str
    offset: int
    limit: int
    answer: asyncio.Future[list[JournalEntry]]


MOST_READS_TOGETHER = 100
"""The most reads one query makes: more wait for no one but go as further queries, so that readers catching up on
long journals together do not make one result of every run's rows."""


class ChunkReads:
    """The store's chunk reads, made together when several are asked for in one turn of the event loop (module
    docstring). The first read of a turn schedules the query for the loop's next turn; every read asked for until
    then joins it (up to ``MOST_READS_TOGETHER`` a query). A read alone is made as before; a failure fails every read
    of its query."""

    def __init__(self, db: PostgresConnections) -> None:
        self._db = db
        self._pending: list[_Read] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queries: set[asyncio.Future[None]] = set()

    async def read(self, run_id: str, offset: int, limit: int) -> list[JournalEntry]:
        loop = asyncio.get_running_loop()
        if self._pending and loop is not self._loop:  # another loop's reads are pending: this one goes alone
            return await read_chunks(self._db, run_id, offset, limit)
        future: asyncio.Future[list[JournalEntry]] = loop.create_future()
        if not self._pending:
            self._loop = loop
            loop.call_soon(self._send)
        self._pending.append(_Read(run_id, offset, limit, future))
        return await future

    def _send(self) -> None:
        reads, self._pending = self._pending, []
        for first in range(0, len(reads), MOST_READS_TOGETHER):
            query = asyncio.ensure_future(self._answer(reads[first : first + MOST_READS_TOGETHER]))
            self._queries.add(query)  # held until done: the loop keeps only a weak reference to a task
            query.add_done_callback(self._queries.discard)

    async def _answer(self, reads: list[_Read]) -> None:
        try:
            if len(reads) == 1:
                read = reads[0]
                found = [await read_chunks(self._db, read.run_id, read.offset, read.limit)]
            else:
                found = await self._db.run(lambda conn, attempt: self._together(conn, reads))
        except asyncio.CancelledError:  # the loop is closing: so are its readers
            for read in reads:
                read.answer.cancel()
            raise
        except Exception as error:
            for read in reads:
                if not read.answer.done():
                    read.answer.set_exception(error)
            return
        for read, entries in zip(reads, found, strict=True):
            if not read.answer.done():  # its reader may have been cancelled meanwhile
                read.answer.set_result(entries)

    async def _together(self, conn: Conn, reads: list[_Read]) -> list[list[JournalEntry]]:
        cursor = await conn.execute(
            _READS_TOGETHER,
            ([read.run_id for read in reads], [read.offset for read in reads], [read.limit for read in reads]),
        )
        rows: list[list[tuple[int, Any]]] = [[] for _ in reads]
        for number, seq, body in await cursor.fetchall():
            rows[int(number) - 1].append((seq, body))
        return [_entries(self._db, read.run_id, found) for read, found in zip(reads, rows, strict=True)]


def _entries(db: PostgresConnections, run_id: str, rows: Sequence[tuple[int, Any]]) -> list[JournalEntry]:
    opened = db.columns.now().open
    return [
        JournalEntry(offset=int(seq), chunk=json.loads(opened(JOURNAL, "body", (run_id, seq), body)))
        for seq, body in rows
    ]


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
