"""The PostgreSQL store's audit trail: an append locks the ``audit_head`` row (the chain's last ``seq`` and hash)
until its transaction ends, so appends from every server take turns and the chain never forks; listings and the
chain are plain reads."""

from __future__ import annotations

from collections.abc import Sequence

from tempo_agents.audit import AuditAction, AuditEntry, AuditQuery, AuditRecord, chain_after
from tempo_agents.store.audit_rows import action_of, chain_sql, insert_sql, listing, record_of, row_of
from tempo_agents.store.postgres.connections import Conn, PostgresConnections
from tempo_agents.store.postgres.failures import Attempt

__all__ = ["append_audit", "append_in", "audit_actions", "audit_chain"]

_LOCK_HEAD = "SELECT seq, hash FROM tempo_agents.audit_head FOR UPDATE"
_MOVE_HEAD = "UPDATE tempo_agents.audit_head SET seq = %s, hash = %s"
_INSERT = insert_sql("tempo_agents.audit", "%s")
_CHAIN = chain_sql("tempo_agents.audit", "%s")


async def append_in(conn: Conn, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
    """Append ``entries`` after the chain's head inside the caller's transaction (the head stays locked until it
    ends)."""
    if not entries:
        return []
    async with conn.cursor() as cursor:
        await cursor.execute(_LOCK_HEAD)
        head = await cursor.fetchone()
        assert head is not None  # the migration inserts the only row
        records = chain_after(int(head[0]), str(head[1]), entries)
        await cursor.executemany(_INSERT, [row_of(record) for record in records])
        await cursor.execute(_MOVE_HEAD, (records[-1].seq, records[-1].hash))
    return records


async def append_audit(db: PostgresConnections, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
    """:meth:`~tempo_agents.store.base.Store.append_audit` in one transaction (never tried twice)."""

    async def op(conn: Conn, attempt: Attempt) -> list[AuditRecord]:
        async with conn.transaction():
            records = await append_in(conn, entries)
            attempt.committing = True
        return records

    return await db.run(op, idempotent=False) if entries else []


async def audit_actions(db: PostgresConnections, query: AuditQuery) -> list[AuditAction]:
    """:meth:`~tempo_agents.store.base.Store.audit_actions`."""
    sql, params = listing(query, "tempo_agents.audit", "%s")

    async def op(conn: Conn, attempt: Attempt) -> list[AuditAction]:
        cursor = await conn.execute(sql, params)
        return [action_of(row) for row in await cursor.fetchall()]

    return await db.run(op)


async def audit_chain(db: PostgresConnections, after: int, limit: int) -> list[AuditRecord]:
    """:meth:`~tempo_agents.store.base.Store.audit_chain`."""

    async def op(conn: Conn, attempt: Attempt) -> list[AuditRecord]:
        cursor = await conn.execute(_CHAIN, (after, limit))
        return [record_of(row) for row in await cursor.fetchall()]

    return await db.run(op)
