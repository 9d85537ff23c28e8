"""The SQLite store's run expiries: when each closed run's records are due to be deleted under its retention, and
how far the retention sweeper has read the closed runs of a task queue."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from tempo_agents.store.sqlite.connections import SQLiteConnections

__all__ = ["expired_runs", "forget_expiries", "retention_mark", "set_expiries", "set_retention_mark"]


async def set_expiries(connections: SQLiteConnections, expiries: Sequence[tuple[str, float]]) -> None:
    def work(db: sqlite3.Connection) -> None:
        db.executemany("INSERT OR REPLACE INTO run_expiries (run_id, expires_at) VALUES (?, ?)", list(expiries))

    if expiries:
        await connections.run(work)


async def expired_runs(connections: SQLiteConnections, now: float, limit: int) -> list[str]:
    def work(db: sqlite3.Connection) -> list[str]:
        rows = db.execute(
            "SELECT run_id FROM run_expiries WHERE expires_at <= ? ORDER BY expires_at, run_id LIMIT ?", (now, limit)
        )
        return [str(run_id) for (run_id,) in rows.fetchall()]

    return await connections.read(work)


async def forget_expiries(connections: SQLiteConnections, run_ids: Sequence[str]) -> None:
    def work(db: sqlite3.Connection) -> None:
        db.executemany("DELETE FROM run_expiries WHERE run_id = ?", [(run_id,) for run_id in run_ids])

    if run_ids:
        await connections.run(work)


async def retention_mark(connections: SQLiteConnections, task_queue: str) -> float | None:
    def work(db: sqlite3.Connection) -> float | None:
        row = db.execute("SELECT value FROM store_facts WHERE name = ?", (f"retention_mark:{task_queue}",)).fetchone()
        return None if row is None else float(row[0])

    return await connections.read(work)


async def set_retention_mark(connections: SQLiteConnections, task_queue: str, mark: float) -> None:
    def work(db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT OR REPLACE INTO store_facts (name, value) VALUES (?, ?)",
            (f"retention_mark:{task_queue}", str(mark)),
        )

    await connections.run(work)
