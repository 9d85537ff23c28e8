"""The PostgreSQL store's part of key rotation (:mod:`tempo_agents.store.key_rotation`): stale rows read, a
batch's compare-and-set swaps in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tempo_agents.store.key_rotation import Swap, stale_rows_parameters, stale_rows_sql, swap_sql
from tempo_agents.store.postgres.connections import Conn, PostgresConnections
from tempo_agents.store.postgres.failures import Attempt
from tempo_agents.store.sealed_columns import SealedTable

__all__ = ["PostgresRotation"]

_SCHEMA = "tempo_agents."


class PostgresRotation:
    """:class:`~tempo_agents.store.key_rotation.KeyRotationBackend` over one PostgreSQL store."""

    def __init__(self, connections: PostgresConnections) -> None:
        self._connections = connections

    async def stale_rows(
        self, table: SealedTable, after: tuple[Any, ...] | None, current: str, limit: int
    ) -> list[tuple[Any, ...]]:
        query = stale_rows_sql(table, _SCHEMA, "%s", after is None, len(current))
        parameters = stale_rows_parameters(table, after, current, limit)

        async def op(conn: Conn, attempt: Attempt) -> list[tuple[Any, ...]]:
            cursor = await conn.execute(query, parameters)
            return [tuple(row) for row in await cursor.fetchall()]

        return await self._connections.run(op)

    async def swap(self, table: SealedTable, swaps: Sequence[Swap]) -> int:
        async def op(conn: Conn, attempt: Attempt) -> int:
            applied = 0
            async with conn.transaction(), conn.cursor() as cursor:
                for swap in swaps:
                    await cursor.execute(
                        swap_sql(table, swap.column, _SCHEMA, "%s"), (swap.new, *swap.identity, swap.old)
                    )
                    applied += cursor.rowcount
                attempt.committing = True
            return applied

        return await self._connections.run(op, idempotent=True)
