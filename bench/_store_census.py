"""What the tempo-agents store holds at a moment, for ``bench/capacity.py``: rows per table, bytes in use and (on
PostgreSQL) rows written so far.

- SQLite: rows by ``count(*)`` per table; bytes are the pages in use (``page_count`` minus ``freelist_count``, times
  ``page_size``, as the reader's snapshot sees them, the write-ahead log included). SQLite keeps no count of
  writes, so ``writes`` is ``None`` and the bench falls back on rows added (updates and deletes unseen).
- PostgreSQL: rows by ``count(*)`` per table of the ``tempo_agents`` schema; bytes by ``pg_total_relation_size``
  (heap, indexes, TOAST); writes by the statistics' inserted, updated and deleted tuples of those tables.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field

import psycopg

__all__ = ["StoreCensus", "store_census"]

_STATS_SETTLE_SECONDS = 1.5
"""PostgreSQL's backends report their table statistics at most once a second, once idle: wait that long first."""


@dataclass
class StoreCensus:
    rows: dict[str, int] = field(default_factory=dict)
    bytes: int = 0
    writes: int | None = None
    """Rows inserted, updated and deleted since the statistics began (PostgreSQL only)."""

    def minus(self, before: StoreCensus) -> StoreCensus:
        """What changed since ``before``."""
        rows = {name: count - before.rows.get(name, 0) for name, count in self.rows.items()}
        writes = None if self.writes is None or before.writes is None else self.writes - before.writes
        return StoreCensus({name: n for name, n in rows.items() if n}, self.bytes - before.bytes, writes)


def store_census(url: str) -> StoreCensus:
    """The census of the store at ``url`` (``sqlite:///PATH`` or ``postgresql://...``)."""
    if url.startswith("sqlite:///"):
        return _sqlite(url.removeprefix("sqlite:///"))
    return _postgresql(url)


def _sqlite(path: str) -> StoreCensus:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = {name: int(db.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]) for name in names}
        pages = int(db.execute("PRAGMA page_count").fetchone()[0]) - int(
            db.execute("PRAGMA freelist_count").fetchone()[0]
        )
        size = pages * int(db.execute("PRAGMA page_size").fetchone()[0])
    return StoreCensus(rows, size, None)


def _postgresql(url: str) -> StoreCensus:
    time.sleep(_STATS_SETTLE_SECONDS)
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("SELECT pg_stat_clear_snapshot()")
        tables = db.execute(
            "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del, pg_total_relation_size(relid) "
            "FROM pg_stat_user_tables WHERE schemaname = 'tempo_agents'"
        ).fetchall()
        rows: dict[str, int] = {}
        for name, _, _ in tables:
            counted = db.execute(f'SELECT count(*) FROM tempo_agents."{name}"').fetchone()
            rows[name] = int(counted[0]) if counted else 0
    return StoreCensus(rows, sum(int(size) for _, _, size in tables), sum(int(n) for _, n, _ in tables))
