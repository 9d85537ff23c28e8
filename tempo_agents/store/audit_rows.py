"""The audit table as both stores keep it: its columns, a record as a row and back, and the listing's query.

Both stores append in a transaction that holds the chain's head (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: the
``audit_head`` row locked), so appends from any number of servers take turns and the chain never forks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tempo_agents.audit import AuditAction, AuditEntry, AuditQuery, AuditRecord

__all__ = ["COLUMNS", "action_of", "chain_sql", "insert_sql", "listing", "record_of", "row_of"]

COLUMNS = (
    "seq", "id", "at", "principal", "tenant", "action", "target", "outcome", "status", "code", "client", "user_agent",
    "completes", "prev_hash", "hash",
)  # fmt: skip
"""The audit table's columns in the order of :func:`row_of`."""

_WIDTH = len(COLUMNS)
_NAMES = ", ".join(COLUMNS)


def row_of(record: AuditRecord) -> tuple[Any, ...]:
    """``record`` as a row of :data:`COLUMNS`."""
    e = record.entry
    return (
        record.seq,
        e.id,
        e.at,
        e.principal,
        e.tenant,
        e.action,
        e.target,
        e.outcome,
        e.status,
        e.code,
        e.client,
        e.user_agent,
        e.completes,
        record.prev_hash,
        record.hash,
    )


def record_of(row: Sequence[Any]) -> AuditRecord:
    """A row of :data:`COLUMNS` as a record."""
    entry = AuditEntry(
        id=row[1],
        at=row[2],
        principal=row[3],
        tenant=row[4],
        action=row[5],
        target=row[6],
        outcome=row[7],
        status=row[8],
        code=row[9],
        client=row[10],
        user_agent=row[11],
        completes=row[12],
    )
    return AuditRecord(int(row[0]), entry, row[13], row[14])


def action_of(row: Sequence[Any]) -> AuditAction:
    """A row of :func:`listing`'s query: the first record's columns, then its completion's (all ``NULL``: none)."""
    completion = None if row[_WIDTH] is None else record_of(row[_WIDTH:])
    return AuditAction(record_of(row[:_WIDTH]), completion)


def _columns(alias: str) -> str:
    return ", ".join(f"{alias}.{name}" for name in COLUMNS)


def insert_sql(table: str, mark: str) -> str:
    """The SQL appending one record as :func:`row_of` gives it (``mark`` is the store's placeholder)."""
    return f"INSERT INTO {table} ({_NAMES}) VALUES ({', '.join([mark] * _WIDTH)})"


def chain_sql(table: str, mark: str) -> str:
    """The SQL reading the chain's records after a ``seq``, at most a number of them, in order."""
    return f"SELECT {_NAMES} FROM {table} WHERE seq > {mark} ORDER BY seq LIMIT {mark}"


def listing(query: AuditQuery, table: str, mark: str) -> tuple[str, list[Any]]:
    """The SQL (``mark`` is the store's placeholder) and parameters listing ``query``'s actions, newest first."""
    clauses = ["i.completes IS NULL"]
    params: list[Any] = []
    exact = {
        "COALESCE(i.tenant, c.tenant)": query.tenant,
        "i.action": query.action,
        "COALESCE(c.target, i.target)": query.target,
        "COALESCE(i.principal, c.principal)": query.principal,
    }
    for column, value in exact.items():
        if value is not None:
            clauses.append(f"{column} = {mark}")
            params.append(value)
    bounds: dict[str, str | int | None] = {"i.at >= ": query.since, "i.at < ": query.until, "i.seq < ": query.before}
    for compared, bound in bounds.items():
        if bound is not None:
            clauses.append(f"{compared}{mark}")
            params.append(bound)
    if query.tenants is not None:
        wanted = sorted(query.tenants)
        clauses.append(f"COALESCE(i.tenant, c.tenant) IN ({', '.join([mark] * len(wanted))})" if wanted else "1 = 0")
        params.extend(wanted)
    sql = (
        f"SELECT {_columns('i')}, {_columns('c')} FROM {table} i LEFT JOIN {table} c ON c.completes = i.id "
        f"WHERE {' AND '.join(clauses)} ORDER BY i.seq DESC LIMIT {mark}"
    )
    params.append(query.limit)
    return sql, params
