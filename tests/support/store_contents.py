"""Everything a store holds, read from underneath it: the SQLite file and its write-ahead log as bytes, or every
PostgreSQL table of the store as text. For tests that must find (or not find) a run's strings at rest; and SQL run
on its audit table behind its back, for tests that must find a tampered record."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg

from tempo_agents.store import Store

__all__ = ["store_contents", "tamper"]


def store_contents(store: Store) -> str:
    """The store's contents as one text (SQLite bytes read as Latin-1, so every byte maps to a character)."""
    if store.url.startswith("sqlite"):
        path = Path(store.url.removeprefix("sqlite:///"))
        return b"".join(file.read_bytes() for file in (path, Path(f"{path}-wal")) if file.exists()).decode("latin-1")
    texts = []
    with psycopg.connect(store.url) as conn:
        tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'tempo_agents'").fetchall()
        for (table,) in tables:
            texts += [str(row[0]) for row in conn.execute(f"SELECT t::text FROM tempo_agents.{table} t").fetchall()]
    return "\n".join(texts)


async def tamper(url: str, statements: list[tuple[str, tuple[object, ...]]]) -> None:
    """Run SQL on the store's audit table behind its back (``audit`` names the table; ``?`` the placeholders)."""
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
            for sql, params in statements:
                db.execute(sql, params)
        return
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for sql, params in statements:
            await conn.execute(sql.replace("audit", "tempo_agents.audit").replace("?", "%s"), params)
