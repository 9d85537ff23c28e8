"""The PostgreSQL store's run expiries: when each closed run's records are due to be deleted under its retention,
and how far the retention sweeper has read the closed runs of a task queue."""

from __future__ import annotations

from collections.abc import Sequence

from tempo_agents.store.postgres.connections import Conn, PostgresConnections
from tempo_agents.store.postgres.failures import Attempt

__all__ = ["expired_runs", "forget_expiries", "retention_mark", "set_expiries", "set_retention_mark"]


async def set_expiries(db: PostgresConnections, expiries: Sequence[tuple[str, float]]) -> None:
    async def op(conn: Conn, attempt: Attempt) -> None:
        async with conn.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO tempo_agents.run_expiries (run_id, expires_at) VALUES (%s, %s) "
                "ON CONFLICT (run_id) DO UPDATE SET expires_at = EXCLUDED.expires_at",
                list(expiries),
            )

    if expiries:
        await db.run(op)


async def expired_runs(db: PostgresConnections, now: float, limit: int) -> list[str]:
    async def op(conn: Conn, attempt: Attempt) -> list[str]:
        cursor = await conn.execute(
            "SELECT run_id FROM tempo_agents.run_expiries WHERE expires_at <= %s ORDER BY expires_at, run_id LIMIT %s",
            (now, limit),
        )
        return [str(row[0]) for row in await cursor.fetchall()]

    return await db.run(op)


async def forget_expiries(db: PostgresConnections, run_ids: Sequence[str]) -> None:
    async def op(conn: Conn, attempt: Attempt) -> None:
        await conn.execute("DELETE FROM tempo_agents.run_expiries WHERE run_id = ANY(%s)", (list(run_ids),))

    if run_ids:
        await db.run(op)


async def retention_mark(db: PostgresConnections, task_queue: str) -> float | None:
    async def op(conn: Conn, attempt: Attempt) -> float | None:
        cursor = await conn.execute(
            "SELECT value FROM tempo_agents.store_facts WHERE name = %s", (f"retention_mark:{task_queue}",)
        )
        row = await cursor.fetchone()
        return None if row is None else float(row[0])

    return await db.run(op)


async def set_retention_mark(db: PostgresConnections, task_queue: str, mark: float) -> None:
    async def op(conn: Conn, attempt: Attempt) -> None:
        await conn.execute(
            "INSERT INTO tempo_agents.store_facts (name, value) VALUES (%s, %s) "
            "ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
            (f"retention_mark:{task_queue}", str(mark)),
        )

    await db.run(op)
