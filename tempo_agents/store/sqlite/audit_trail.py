"""The SQLite store's audit trail: appends in a ``BEGIN IMMEDIATE`` transaction (every process's writers take turns,
so the chain's head read is the newest), listings and the chain read on the reader thread."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from tempo_agents.audit import GENESIS, AuditAction, AuditEntry, AuditQuery, AuditRecord, chain_after
from tempo_agents.store.audit_rows import action_of, chain_sql, insert_sql, listing, record_of, row_of
from tempo_agents.store.sqlite.connections import SQLiteConnections
from tempo_agents.store.sqlite.transactions import immediate

__all__ = ["append_audit", "append_in", "audit_actions", "audit_chain"]

_HEAD = "SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1"
_INSERT = insert_sql("audit", "?")
_CHAIN = chain_sql("audit", "?")


def append_in(db: sqlite3.Connection, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
    """Append ``entries`` after the chain's head, inside the caller's ``BEGIN IMMEDIATE`` transaction."""
    if not entries:
        return []
    head = db.execute(_HEAD).fetchone()
    seq, prev = (0, GENESIS) if head is None else (int(head[0]), str(head[1]))
    records = chain_after(seq, prev, entries)
    db.executemany(_INSERT, [row_of(record) for record in records])
    return records


async def append_audit(connections: SQLiteConnections, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
    """:meth:`~tempo_agents.store.base.Store.append_audit` on the writer thread, in a group commit with the journal's
    writes (``group_commit.py``): a group's entries are chained in the order they joined it."""

    def work(db: sqlite3.Connection) -> list[AuditRecord]:
        with immediate(db):
            records = append_in(db, entries)
        return records

    return await connections.run_grouped(work) if entries else []


async def audit_actions(connections: SQLiteConnections, query: AuditQuery) -> list[AuditAction]:
    """:meth:`~tempo_agents.store.base.Store.audit_actions` on the reader thread."""
    sql, params = listing(query, "audit", "?")
    rows = await connections.read(lambda db: db.execute(sql, params).fetchall())
    return [action_of(row) for row in rows]


async def audit_chain(connections: SQLiteConnections, after: int, limit: int) -> list[AuditRecord]:
    """:meth:`~tempo_agents.store.base.Store.audit_chain` on the reader thread."""
    rows = await connections.read(lambda db: db.execute(_CHAIN, (after, limit)).fetchall())
    return [record_of(row) for row in rows]
