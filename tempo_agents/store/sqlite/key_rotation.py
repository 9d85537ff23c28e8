"""The SQLite store's part of key rotation (:mod:`tempo_agents.store.key_rotation`): stale rows read on the reader
thread, a batch's compare-and-set swaps in one transaction on the writer thread."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from tempo_agents.store.key_rotation import Swap, stale_rows_parameters, stale_rows_sql, swap_sql
from tempo_agents.store.sealed_columns import SealedTable
from tempo_agents.store.sqlite.connections import SQLiteConnections
from tempo_agents.store.sqlite.transactions import immediate

__all__ = ["SQLiteRotation"]


class SQLiteRotation:
    """:class:`~tempo_agents.store.key_rotation.KeyRotationBackend` over one SQLite file."""

    def __init__(self, connections: SQLiteConnections) -> None:
        self._connections = connections

    async def stale_rows(
        self, table: SealedTable, after: tuple[Any, ...] | None, current: str, limit: int
    ) -> list[tuple[Any, ...]]:
        query = stale_rows_sql(table, "", "?", after is None, len(current))
        parameters = stale_rows_parameters(table, after, current, limit)

        def work(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return [tuple(row) for row in db.execute(query, parameters).fetchall()]

        return await self._connections.read(work)

    async def swap(self, table: SealedTable, swaps: Sequence[Swap]) -> int:
        def work(db: sqlite3.Connection) -> int:
            with immediate(db):
                applied = 0
                for swap in swaps:
                    query = swap_sql(table, swap.column, "", "?")
                    applied += db.execute(query, (swap.new, *swap.identity, swap.old)).rowcount
            return applied

        return await self._connections.run(work)
