"""SQLite store: the default, one file shared by a worker and readers in other processes (WAL).

Tailing a journal: a reader waits in :meth:`SQLiteStore.wait_for_chunks` until a chunk at its offset may exist.
An append made through the same store object wakes that run's waiters at once. Appends made by another process
(a worker, while this process is an API server or a dashboard) are noticed by one watcher thread per store:

- it runs only while at least one reader waits, and blocks on a condition otherwise (no CPU at all);
- every ``poll_interval`` (5 ms) it asks a dedicated connection for ``PRAGMA data_version``, which SQLite changes
  whenever another connection, in any process, has committed: one short read of the WAL index, no table read;
- only when that changed, it reads the latest offset of every waited-on run in one query (a primary-key seek per
  run) and wakes the waiters whose offset now exists. Waiters of other runs stay asleep, so a commit to one run
  costs the tails of other runs nothing, and the cost of a quiet tick does not grow with the number of runs;
- a newly registered waiter is checked on the next tick even without a change (a commit may have landed between
  the reader's last read and its registration).

Why this and not something else, measured on 2 shared cores (Python 3.11, SQLite 3.40): a thread that only
sleeps 5 ms in a loop costs ~0.7% of a core in wake-ups alone; ``PRAGMA data_version`` adds ~2.5 us a call
(~0.5% at 200 checks a second), ``os.stat`` of the ``-wal`` file ~1.5 us, no material saving, and an mtime
check can miss a second commit in the same coarse clock tick, while ``data_version`` cannot. inotify is not
in the standard library. The old design, each reader re-reading its run every 50 ms, cost ~9% of a core for
an idle tail of 100 runs and put another process ~25 ms (p95 ~48 ms) behind an append; with the watcher that is
~1.5% (~1.2% of it the tick itself, whatever the number of runs) and ~4 ms (p95 ~6 ms), per
``bench/stream_latency.py`` (bench/README.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from tempo_agents.store import base  # the waiting-call helpers, as base.<name>
from tempo_agents.store._waiters import Waiter as _Waiter
from tempo_agents.store._waiters import wake as _wake
from tempo_agents.store.base import (
    ChunkWrite,
    JournalEntry,
    SavedOutcome,
    Store,
    TranscriptEntry,
    to_json,
    transcript_rows,
)

_T = TypeVar("_T")

_log = logging.getLogger(__name__)

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
CREATE TABLE IF NOT EXISTS waiting_calls (
    run_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    round INTEGER NOT NULL,
    task_queue TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    thread_id TEXT,
    resource_id TEXT,
    suspended_at REAL NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, tool_call_id)
);
CREATE INDEX IF NOT EXISTS waiting_calls_queue ON waiting_calls (task_queue, suspended_at);
CREATE INDEX IF NOT EXISTS waiting_calls_runs ON waiting_calls (task_queue, run_id);
CREATE TABLE IF NOT EXISTS answered_calls (
    run_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    round INTEGER NOT NULL,
    task_queue TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    thread_id TEXT,
    resource_id TEXT,
    answered_at REAL NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, tool_call_id, round)
);
CREATE INDEX IF NOT EXISTS answered_calls_queue ON answered_calls (task_queue, answered_at);
CREATE TABLE IF NOT EXISTS child_runs (
    run_id TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS store_facts (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS usage_counters (
    scope TEXT NOT NULL,
    period TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    cost_nanos INTEGER NOT NULL,
    PRIMARY KEY (scope, period)
);
CREATE TABLE IF NOT EXISTS thread_state (
    thread_id TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (thread_id, type)
);
"""

_OUTCOME = "SELECT body FROM outcomes WHERE run_id = ? AND key = ?"
_CHARGE = """
INSERT INTO usage_counters (scope, period, tokens, cost_nanos) VALUES (?, ?, ?, ?)
ON CONFLICT (scope, period) DO UPDATE
SET tokens = tokens + excluded.tokens, cost_nanos = cost_nanos + excluded.cost_nanos
"""
_APPEND = """
INSERT INTO journal (run_id, seq, key, body)
VALUES (?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM journal WHERE run_id = ?), ?, ?)
ON CONFLICT (run_id, key) DO UPDATE SET body = excluded.body
RETURNING seq
"""

_LATEST_OFFSETS = "SELECT value, (SELECT MAX(seq) FROM journal WHERE run_id = value) FROM json_each(?)"
"""The last offset of each run in a JSON list (one primary-key seek per run; ``IN (...) GROUP BY`` scans every
row of those runs)."""

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
    process are woken as soon as a chunk is appended; chunks appended by other processes are noticed by a
    watcher thread that, while a reader waits, checks the file every ``poll_interval`` seconds (module
    docstring).
    """

    def __init__(self, path: str | Path, *, poll_interval: float = 0.005) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self.poll_interval = poll_interval
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tempo-agents-sqlite")
        self._read_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tempo-agents-sqlite-read")
        self._connection: sqlite3.Connection | None = None
        self._read_connection: sqlite3.Connection | None = None
        self._waiters: dict[str, list[_Waiter]] = {}
        self._waiters_lock = threading.Lock()
        self._waiters_changed = threading.Condition(self._waiters_lock)
        self._unchecked: set[str] = set()
        """Runs with a waiter the watcher has not checked yet."""
        self._watcher: threading.Thread | None = None
        self._closed = False

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
            _start_keeping_waiting_calls(connection)
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
        _wake(waiters)

    def _watch(self) -> None:
        """The watcher thread (module docstring): wakes waiters for chunks other connections committed."""
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA query_only=ON")
            version: int | None = None
            failing = False
            while True:
                with self._waiters_lock:
                    while not self._waiters and not self._closed:
                        self._waiters_changed.wait()
                    if self._closed:
                        return
                    fresh = self._unchecked
                    if fresh:
                        self._unchecked = set()
                try:
                    current = int(db.execute("PRAGMA data_version").fetchall()[0][0])
                    if current != version:
                        with self._waiters_lock:
                            runs = list(self._waiters)
                    else:
                        runs = list(fresh)
                    version = current
                    if runs:
                        latest = db.execute(_LATEST_OFFSETS, (json.dumps(runs),)).fetchall()
                        self._wake_up_to({run_id: seq for run_id, seq in latest if seq is not None})
                    failing = False
                except sqlite3.Error:
                    # Waiters still return at their timeout and re-read: tailing degrades to polling.
                    level = logging.DEBUG if failing else logging.WARNING
                    _log.log(level, "watching %s for appends failed", self.path, exc_info=True)
                    failing, version = True, None
                time.sleep(self.poll_interval)
        finally:
            db.close()

    def _wake_up_to(self, latest: Mapping[str, int]) -> None:
        """Wake the waiters whose offset is at most their run's latest offset."""
        due: list[_Waiter] = []
        with self._waiters_lock:
            for run_id, last in latest.items():
                waiters = self._waiters.get(run_id)
                if not waiters:
                    continue
                keep = [w for w in waiters if w.offset > last]
                if len(keep) == len(waiters):
                    continue
                due += [w for w in waiters if w.offset <= last]
                if keep:
                    self._waiters[run_id] = keep
                else:
                    del self._waiters[run_id]
        _wake(due)

    async def record(
        self,
        run_id: str,
        entries: Sequence[TranscriptEntry],
        writes: Sequence[ChunkWrite],
        outcome: SavedOutcome | None = None,
        waiting: base.WaitingChange | None = None,
        charges: Sequence[base.UsageCharge] = (),
        fence: base.StartFence | None = None,
    ) -> list[int]:
        def work(db: sqlite3.Connection) -> list[int]:
            db.execute("BEGIN IMMEDIATE")
            try:
                if fence is not None:  # writers take turns (BEGIN IMMEDIATE): the count read here is the newest
                    counted = db.execute(_OUTCOME, (run_id, fence.counter_key)).fetchone()
                    fence.check(run_id, None if counted is None else json.loads(counted[0]))
                offsets = _record_in(db, run_id, entries, writes, outcome, charges)
                _change_waiting(db, run_id, writes, waiting)
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
        if self._closed:
            return
        if self._connection is None:
            await self._run(lambda db: None)  # the writer creates the journal table the watcher reads
        loop = asyncio.get_running_loop()
        waiter = _Waiter(offset, loop, loop.create_future())
        with self._waiters_lock:
            if self._closed:
                return
            self._waiters.setdefault(run_id, []).append(waiter)
            self._unchecked.add(run_id)
            if self._watcher is None:
                self._watcher = threading.Thread(target=self._watch, name="tempo-agents-sqlite-watch", daemon=True)
                self._watcher.start()
            else:
                self._waiters_changed.notify()
        try:
            await asyncio.wait_for(waiter.future, timeout=timeout)
        except TimeoutError:
            pass
        finally:
            with self._waiters_lock:
                remaining = [w for w in self._waiters.get(run_id, []) if w is not waiter]
                if remaining:
                    self._waiters[run_id] = remaining
                else:
                    self._waiters.pop(run_id, None)

    async def usage_counters(self, counters: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, int]]:
        def work(db: sqlite3.Connection) -> dict[tuple[str, str], tuple[int, int]]:
            found: dict[tuple[str, str], tuple[int, int]] = {}
            for scope, period in counters:
                row = db.execute(
                    "SELECT tokens, cost_nanos FROM usage_counters WHERE scope = ? AND period = ?", (scope, period)
                ).fetchone()
                if row is not None:
                    found[(scope, period)] = (int(row[0]), int(row[1]))
            return found

        return await self._read(work) if counters else {}

    async def saved_outcome(self, run_id: str, key: str) -> dict[str, Any] | None:
        def work(db: sqlite3.Connection) -> dict[str, Any] | None:
            row = db.execute(_OUTCOME, (run_id, key)).fetchone()
            return None if row is None else dict(json.loads(row[0]))

        return await self._read(work)

    async def saved_or_counted(self, run_id: str, key: str, counter_key: str) -> tuple[dict[str, Any] | None, int]:
        def work(db: sqlite3.Connection) -> tuple[dict[str, Any] | None, int]:
            db.execute("BEGIN IMMEDIATE")
            try:
                saved = db.execute(_OUTCOME, (run_id, key)).fetchone()
                if saved is not None:
                    db.execute("COMMIT")
                    return dict(json.loads(saved[0])), 0
                counted = db.execute(_OUTCOME, (run_id, counter_key)).fetchone()
                count = 1 + (int(json.loads(counted[0])["starts"]) if counted is not None else 0)
                _record_in(db, run_id, (), (), SavedOutcome(counter_key, {"starts": count}))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return None, count

        return await self._run(work)

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
                where = "thread_id = ? AND resource_id = ?"
                kept = dict(
                    db.execute(
                        f"SELECT idx, created FROM thread_messages WHERE {where} AND run_id = ?",
                        (thread_id, resource_id, run_id),
                    ).fetchall()
                )
                last = max(kept.values(), default=None)
                later = (
                    last is not None
                    and db.execute(
                        f"SELECT 1 FROM thread_messages WHERE {where} AND created > ? AND run_id <> ? LIMIT 1",
                        (thread_id, resource_id, last, run_id),
                    ).fetchone()
                )
                if last is None or later:
                    fresh = db.execute("SELECT COALESCE(MAX(created), 0) + 1 FROM thread_messages").fetchone()[0]
                else:
                    fresh = last
                db.executemany(
                    "INSERT OR REPLACE INTO thread_messages (thread_id, resource_id, run_id, idx, created, body) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (thread_id, resource_id, run_id, i, kept.get(i, fresh), to_json(m))
                        for i, m in enumerate(messages)
                    ],
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

        await self._run(work)

    async def remove_run_from_thread(self, thread_id: str, resource_id: str, run_id: str) -> int:
        def work(db: sqlite3.Connection) -> int:
            cursor = db.execute(
                "DELETE FROM thread_messages WHERE thread_id = ? AND resource_id = ? AND run_id = ?",
                (thread_id, resource_id, run_id),
            )
            return int(cursor.rowcount)

        return await self._run(work)

    async def get_thread_messages(self, thread_id: str, resource_id: str) -> list[dict[str, Any]]:
        def work(db: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = db.execute(
                "SELECT body FROM thread_messages WHERE thread_id = ? AND resource_id = ? ORDER BY created, idx",
                (thread_id, resource_id),
            ).fetchall()
            return [json.loads(body) for (body,) in rows]

        return await self._read(work)

    async def thread_messages_after(self, thread_id: str, resource_id: str, run_id: str) -> list[dict[str, Any]]:
        def work(db: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = db.execute(
                "SELECT body FROM thread_messages WHERE thread_id = ? AND resource_id = ? AND run_id <> ? AND "
                "created > (SELECT COALESCE(MAX(created), 0) FROM thread_messages "
                "WHERE thread_id = ? AND resource_id = ? AND run_id = ?) ORDER BY created, idx",
                (thread_id, resource_id, run_id, thread_id, resource_id, run_id),
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
                (thread_id, state_type, to_json(value)),
            )

        await self._run(work)

    async def waiting_runs(
        self,
        task_queue: str,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        limit: int | None = None,
        skip: int = 0,
    ) -> base.WaitingRuns:
        clauses, values = base.waiting_filter("?", task_queue, agent_id, thread_id, resource_id)
        where = " AND ".join(clauses) + " AND run_id NOT IN (SELECT run_id FROM child_runs)"

        def work(db: sqlite3.Connection) -> base.WaitingRuns:
            db.execute("BEGIN")
            try:
                total = int(db.execute(f"SELECT COUNT(DISTINCT run_id) FROM waiting_calls WHERE {where}", values)
                            .fetchone()[0])  # fmt: skip
                calls = db.execute(f"SELECT run_id FROM waiting_calls WHERE {where} {base.WAITING_ORDER}", values)
                wanted = None if limit is None else skip + limit
                ids = base.first_runs((row[0] for row in calls), wanted)[skip:]  # reads the calls up to the page's end
                calls.close()
                rows = db.execute(
                    f"SELECT {base.WAITING_COLUMNS} FROM waiting_calls WHERE run_id IN (SELECT value FROM json_each(?))"
                    " ORDER BY suspended_at, tool_call_id",
                    (to_json(ids),),
                ).fetchall()
            finally:
                db.execute("COMMIT")
            return base.WaitingRuns(runs=base.group_waiting(ids, rows), total=total)

        return await self._read(work)

    async def forget_waiting(
        self, run_id: str, tool_call_id: str, round: int, answer: base.GivenAnswer | None = None
    ) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                if answer is not None:
                    db.execute(
                        "INSERT OR IGNORE INTO answered_calls (run_id, tool_call_id, round, task_queue, agent_id,"
                        " thread_id, resource_id, answered_at, body) SELECT run_id, tool_call_id, round, task_queue,"
                        " agent_id, thread_id, resource_id, ?, ? FROM waiting_calls"
                        " WHERE run_id = ? AND tool_call_id = ? AND round <= ?",
                        (answer.answered_at, to_json(answer.answer), run_id, tool_call_id, round),
                    )
                db.execute(
                    "DELETE FROM waiting_calls WHERE run_id = ? AND tool_call_id = ? AND round <= ?",
                    (run_id, tool_call_id, round),
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

        await self._run(work)

    async def answered_calls(
        self, task_queue: str, *, agent_id: str | None = None, limit: int | None = None, skip: int = 0
    ) -> base.AnsweredCalls:
        clauses, values = base.waiting_filter("?", task_queue, agent_id, None, None)
        where = " AND ".join(clauses) + " AND run_id NOT IN (SELECT run_id FROM child_runs)"

        def work(db: sqlite3.Connection) -> base.AnsweredCalls:
            db.execute("BEGIN")
            try:
                total = int(db.execute(f"SELECT COUNT(*) FROM answered_calls WHERE {where}", values).fetchone()[0])
                rows = db.execute(
                    f"SELECT {base.ANSWERED_COLUMNS} FROM answered_calls WHERE {where} {base.ANSWERED_ORDER}"
                    " LIMIT ? OFFSET ?",
                    [*values, -1 if limit is None else limit, skip],
                ).fetchall()
            finally:
                db.execute("COMMIT")
            return base.AnsweredCalls(answers=[base.answered_call(row) for row in rows], total=total)

        return await self._read(work)

    async def waiting_kept_since(self) -> float:
        def work(db: sqlite3.Connection) -> float:
            row = db.execute("SELECT value FROM store_facts WHERE name = 'waiting_calls_since'").fetchone()
            return float(row[0])

        return await self._run(work)

    async def migrate(self) -> str:
        await self._run(lambda db: None)  # opening the file creates or upgrades its tables
        return f"{self.url}: schema up to date"

    async def close(self) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.close()

        with self._waiters_lock:  # stop the watcher; readers still waiting return at their timeout
            self._closed = True
            self._waiters_changed.notify_all()
            watcher = self._watcher
        if watcher is not None:
            await asyncio.get_running_loop().run_in_executor(self._read_executor, watcher.join)
        if self._connection is not None:
            await self._run(work)
            self._connection = None
        if self._read_connection is not None:
            await self._read(work)
            self._read_connection = None
        self._executor.shutdown(wait=False)
        self._read_executor.shutdown(wait=False)


def _record_in(
    db: sqlite3.Connection,
    run_id: str,
    entries: Sequence[TranscriptEntry],
    writes: Sequence[ChunkWrite],
    outcome: SavedOutcome | None,
    charges: Sequence[base.UsageCharge] = (),
) -> list[int]:
    """The writes of :meth:`SQLiteStore.record`, inside the caller's transaction."""
    _put_transcript(db, run_id, entries)
    db.executemany(_CHARGE, [(c.scope, c.period, c.tokens, c.cost_nanos) for c in charges])
    if outcome is not None:
        db.execute(
            "INSERT OR REPLACE INTO outcomes (run_id, key, body) VALUES (?, ?, ?)",
            (run_id, outcome.key, to_json(outcome.value)),
        )
    return [int(db.execute(_APPEND, (run_id, run_id, w.key, to_json(w.chunk))).fetchone()[0]) for w in writes]


def _start_keeping_waiting_calls(db: sqlite3.Connection) -> None:
    """Note when this store began to keep waiting calls; a store made before links its child runs from its
    journals once (``json_extract`` over the journal, once per store)."""
    if db.execute("SELECT 1 FROM store_facts WHERE name = 'waiting_calls_since'").fetchone() is not None:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("SELECT 1 FROM store_facts WHERE name = 'waiting_calls_since'").fetchone() is None:
            db.execute(
                "INSERT OR IGNORE INTO child_runs (run_id) SELECT json_extract(body, '$.data.childRunId') FROM journal "
                "WHERE json_extract(body, '$.type') = ? "
                "AND json_extract(body, '$.data.childRunId') IS NOT NULL",
                (base.CHILD_RUN_CHUNK,),
            )
            now = datetime.now(UTC).timestamp()
            db.execute("INSERT INTO store_facts (name, value) VALUES ('waiting_calls_since', ?)", (str(now),))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _change_waiting(
    db: sqlite3.Connection, run_id: str, writes: Sequence[ChunkWrite], waiting: base.WaitingChange | None
) -> None:
    """The waiting calls' part of :meth:`SQLiteStore.record`, inside the caller's transaction."""
    db.executemany("INSERT OR IGNORE INTO child_runs (run_id) VALUES (?)", [(c,) for c in base.child_runs_in(writes)])
    if base.ends_run(writes):
        db.execute("DELETE FROM waiting_calls WHERE run_id = ?", (run_id,))
        return
    if waiting is None:
        return
    db.executemany(
        "DELETE FROM waiting_calls WHERE run_id = ? AND tool_call_id = ?", [(run_id, c) for c in waiting.answered]
    )
    db.executemany(
        f"INSERT OR REPLACE INTO waiting_calls ({base.WAITING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [base.waiting_row(call) for call in waiting.waits],
    )
    db.executemany(
        "UPDATE waiting_calls SET body = json_patch(body, ?) WHERE run_id = ? AND tool_call_id = ? AND round = ?",
        [(call.body_patch(), run_id, call.tool_call_id, call.round) for call in waiting.readdressed],
    )


def _put_transcript(db: sqlite3.Connection, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
    """Upsert entries under the run's next transcript revision (inside the caller's transaction)."""
    if not entries:
        return
    revision = int(db.execute(_NEXT_REVISION, (run_id,)).fetchone()[0])
    db.executemany(
        _PUT_TRANSCRIPT,
        transcript_rows(run_id, entries, revision),
    )
