"""SQLite store: the default, one file shared by a worker and readers in other processes (WAL)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from tempo_agents.store.base import ChunkWrite, JournalEntry, SavedOutcome, Store, TranscriptEntry

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    key TEXT,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS journal_key ON journal (run_id, key);
CREATE TABLE IF NOT EXISTS transcript (
    run_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    part TEXT NOT NULL,
    position INTEGER NOT NULL,
    body TEXT NOT NULL,
    memory_body TEXT,
    revision INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, step, part)
);
CREATE TABLE IF NOT EXISTS transcript_revision (
    run_id TEXT PRIMARY KEY,
    revision INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outcomes (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE TABLE IF NOT EXISTS thread_messages (
    thread_id TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    created INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (thread_id, resource_id, run_id, idx)
);
CREATE INDEX IF NOT EXISTS thread_messages_order ON thread_messages (thread_id, resource_id, created, idx);
CREATE TABLE IF NOT EXISTS thread_state (
    thread_id TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (thread_id, type)
);
"""

_APPEND = """
INSERT INTO journal (run_id, seq, key, body)
VALUES (?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM journal WHERE run_id = ?), ?, ?)
ON CONFLICT (run_id, key) DO UPDATE SET body = excluded.body
RETURNING seq
"""

_NEXT_REVISION = """
INSERT INTO transcript_revision (run_id, revision) VALUES (?, 1)
ON CONFLICT (run_id) DO UPDATE SET revision = revision + 1
RETURNING revision
"""

_PUT_TRANSCRIPT = """
INSERT INTO transcript (run_id, step, part, position, body, memory_body, revision) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id, step, part) DO UPDATE SET
    position = excluded.position, body = excluded.body, memory_body = excluded.memory_body,
    revision = excluded.revision
"""

_TRANSCRIPT_COLUMNS = "step, part, position, body, memory_body"


class SQLiteStore(Store):
    """A :class:`Store` in one SQLite file.

    All SQL runs on one private thread so the event loop never blocks on disk. Readers in the same
    process are woken as soon as a chunk is appended; readers in other processes poll every
    ``poll_interval`` seconds.
    """

    def __init__(self, path: str | Path, *, poll_interval: float = 0.05) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self.poll_interval = poll_interval
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tempo-agents-sqlite")
        self._read_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tempo-agents-sqlite-read")
        self._connection: sqlite3.Connection | None = None
        self._read_connection: sqlite3.Connection | None = None
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
        self._waiters_lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.executescript(_SCHEMA)
            columns = {row[1] for row in connection.execute("PRAGMA table_info(transcript)")}
            if "memory_body" not in columns:  # stores made before transcript projections existed
                connection.execute("ALTER TABLE transcript ADD COLUMN memory_body TEXT")
            if "revision" not in columns:  # stores made before incremental transcript reads
                connection.execute("ALTER TABLE transcript ADD COLUMN revision INTEGER NOT NULL DEFAULT 0")
            connection.execute("CREATE INDEX IF NOT EXISTS transcript_revision_order ON transcript (run_id, revision)")
            self._connection = connection
        return self._connection

    def _connect_reader(self) -> sqlite3.Connection:
        if self._read_connection is None:
            connection = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA query_only=ON")
            self._read_connection = connection
        return self._read_connection

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run on the writer thread (every write, in order)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: work(self._connect()))

    async def _read(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run on the reader thread: WAL lets reads proceed while the writer commits, so tailing clients
        never queue behind the worker's writes."""
        if self._connection is None:
            await self._run(lambda db: None)  # the writer creates the schema first
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._read_executor, lambda: work(self._connect_reader()))

    def _notify(self, run_id: str) -> None:
        with self._waiters_lock:
            waiters = self._waiters.pop(run_id, [])
        for loop, future in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, future)

    async def append_chunks(self, run_id: str, writes: Sequence[ChunkWrite]) -> list[int]:
        if not writes:
            return []

        return await self.record(run_id, (), writes)

    async def record(
        self,
        run_id: str,
        entries: Sequence[TranscriptEntry],
        writes: Sequence[ChunkWrite],
        outcome: SavedOutcome | None = None,
    ) -> list[int]:
        def work(db: sqlite3.Connection) -> list[int]:
            db.execute("BEGIN IMMEDIATE")
            try:
                _put_transcript(db, run_id, entries)
                if outcome is not None:
                    db.execute(
                        "INSERT OR REPLACE INTO outcomes (run_id, key, body) VALUES (?, ?, ?)",
                        (run_id, outcome.key, _dumps(outcome.value)),
                    )
                offsets = [
                    int(db.execute(_APPEND, (run_id, run_id, w.key, _dumps(w.chunk))).fetchone()[0]) for w in writes
                ]
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return offsets

        offsets = await self._run(work)
        if writes:
            self._notify(run_id)
        return offsets

    async def read_chunks(self, run_id: str, offset: int = 0, limit: int = 1000) -> list[JournalEntry]:
        def work(db: sqlite3.Connection) -> list[JournalEntry]:
            rows = db.execute(
                "SELECT seq, body FROM journal WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
                (run_id, offset, limit),
            ).fetchall()
            return [JournalEntry(offset=int(seq), chunk=json.loads(body)) for seq, body in rows]

        return await self._read(work)

    async def offset_of(self, run_id: str, key: str) -> int | None:
        def work(db: sqlite3.Connection) -> int | None:
            row = db.execute("SELECT seq FROM journal WHERE run_id = ? AND key = ?", (run_id, key)).fetchone()
            return None if row is None else int(row[0])

        return await self._read(work)

    async def wait_for_chunks(self, run_id: str, offset: int, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._waiters_lock:
            self._waiters.setdefault(run_id, []).append((loop, future))
        try:
            await asyncio.wait_for(future, timeout=min(timeout, self.poll_interval))
        except TimeoutError:
            pass
        finally:
            with self._waiters_lock:
                remaining = [(lp, f) for lp, f in self._waiters.get(run_id, []) if f is not future]
                if remaining:
                    self._waiters[run_id] = remaining
                else:
                    self._waiters.pop(run_id, None)

    async def saved_outcome(self, run_id: str, key: str) -> dict[str, Any] | None:
        def work(db: sqlite3.Connection) -> dict[str, Any] | None:
            row = db.execute("SELECT body FROM outcomes WHERE run_id = ? AND key = ?", (run_id, key)).fetchone()
            return None if row is None else dict(json.loads(row[0]))

        return await self._read(work)

    async def put_transcript(self, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                _put_transcript(db, run_id, entries)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

        if entries:
            await self._run(work)

    async def get_transcript(self, run_id: str) -> list[TranscriptEntry]:
        entries, _ = await self.transcript_changes(run_id, 0)
        return entries

    async def transcript_changes(self, run_id: str, after_revision: int) -> tuple[list[TranscriptEntry], int]:
        def work(db: sqlite3.Connection) -> tuple[list[TranscriptEntry], int]:
            db.execute("BEGIN")
            try:
                row = db.execute("SELECT revision FROM transcript_revision WHERE run_id = ?", (run_id,)).fetchone()
                rows = db.execute(
                    f"SELECT {_TRANSCRIPT_COLUMNS} FROM transcript WHERE run_id = ? AND revision > ? "
                    "ORDER BY step, position, part",
                    (run_id, after_revision if row is not None and after_revision > 0 else -1),
                ).fetchall()
            finally:
                db.execute("COMMIT")
            entries = [
                TranscriptEntry(
                    step=s, part=p, position=pos, message=json.loads(b), memory_message=json.loads(m) if m else None
                )
                for s, p, pos, b, m in rows
            ]
            return entries, 0 if row is None else int(row[0])

        return await self._read(work)

    async def append_thread_messages(
        self, thread_id: str, resource_id: str, run_id: str, messages: Sequence[dict[str, Any]]
    ) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                created = db.execute(
                    "SELECT COALESCE(MIN(created), (SELECT COALESCE(MAX(created), 0) + 1 FROM thread_messages)) "
                    "FROM thread_messages WHERE thread_id = ? AND resource_id = ? AND run_id = ?",
                    (thread_id, resource_id, run_id),
                ).fetchone()[0]
                db.executemany(
                    "INSERT OR REPLACE INTO thread_messages (thread_id, resource_id, run_id, idx, created, body) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(thread_id, resource_id, run_id, i, created, _dumps(m)) for i, m in enumerate(messages)],
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

        await self._run(work)

    async def get_thread_messages(self, thread_id: str, resource_id: str) -> list[dict[str, Any]]:
        def work(db: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = db.execute(
                "SELECT body FROM thread_messages WHERE thread_id = ? AND resource_id = ? ORDER BY created, idx",
                (thread_id, resource_id),
            ).fetchall()
            return [json.loads(body) for (body,) in rows]

        return await self._read(work)

    async def get_thread_state(self, thread_id: str, state_type: str) -> Any | None:
        def work(db: sqlite3.Connection) -> Any | None:
            row = db.execute(
                "SELECT body FROM thread_state WHERE thread_id = ? AND type = ?", (thread_id, state_type)
            ).fetchone()
            return None if row is None else json.loads(row[0])

        return await self._read(work)

    async def set_thread_state(self, thread_id: str, state_type: str, value: Any) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO thread_state (thread_id, type, body) VALUES (?, ?, ?) "
                "ON CONFLICT (thread_id, type) DO UPDATE SET body = excluded.body",
                (thread_id, state_type, _dumps(value)),
            )

        await self._run(work)

    async def close(self) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.close()

        if self._connection is not None:
            await self._run(work)
            self._connection = None
        if self._read_connection is not None:
            await self._read(work)
            self._read_connection = None
        self._executor.shutdown(wait=False)
        self._read_executor.shutdown(wait=False)


def _put_transcript(db: sqlite3.Connection, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
    """Upsert entries under the run's next transcript revision (inside the caller's transaction)."""
    if not entries:
        return
    revision = int(db.execute(_NEXT_REVISION, (run_id,)).fetchone()[0])
    db.executemany(
        _PUT_TRANSCRIPT,
        [
            (
                run_id,
                e.step,
                e.part,
                e.position,
                _dumps(e.message),
                None if e.memory_message is None else _dumps(e.memory_message),
                revision,
            )
            for e in entries
        ],
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
