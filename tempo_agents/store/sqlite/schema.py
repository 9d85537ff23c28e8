"""The SQLite store's file: its tables, created or upgraded when the writer opens it, and WAL so that readers in
other processes never wait for the writer."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from tempo_agents.store import base
from tempo_agents.store.sqlite.transactions import immediate

__all__ = ["open_writer"]

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
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    at TEXT NOT NULL,
    principal TEXT,
    tenant TEXT,
    action TEXT NOT NULL,
    target TEXT,
    outcome TEXT NOT NULL,
    status INTEGER,
    code TEXT,
    client TEXT,
    user_agent TEXT,
    completes TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_completes ON audit (completes);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
CREATE TABLE IF NOT EXISTS thread_state (
    thread_id TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (thread_id, type)
);
CREATE TABLE IF NOT EXISTS run_expiries (
    run_id TEXT PRIMARY KEY,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS run_expiries_due ON run_expiries (expires_at);
CREATE TABLE IF NOT EXISTS erased_runs (
    run_id TEXT PRIMARY KEY,
    erased_at REAL NOT NULL
);
"""


WRITER_BUSY_SECONDS = 30.0
"""How long the writer waits for a lock another connection holds on the file before a write fails."""


def open_writer(path: Path) -> sqlite3.Connection:
    """The writer's connection to the file, its tables created or upgraded (stores made by earlier versions). Its
    deletions overwrite what they free (``secure_delete``, off by default in some SQLite builds), so a row deleted or
    rewritten leaves no copy of itself in the file's free space."""
    connection = sqlite3.connect(path, timeout=WRITER_BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA secure_delete=ON")
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
    return connection


def _start_keeping_waiting_calls(db: sqlite3.Connection) -> None:
    """Note when this store began to keep waiting calls; a store made before links its child runs from its
    journals once (``json_extract`` over the journal, once per store)."""
    if db.execute("SELECT 1 FROM store_facts WHERE name = 'waiting_calls_since'").fetchone() is not None:
        return
    with immediate(db):
        if db.execute("SELECT 1 FROM store_facts WHERE name = 'waiting_calls_since'").fetchone() is None:
            db.execute(
                "INSERT OR IGNORE INTO child_runs (run_id) SELECT json_extract(body, '$.data.childRunId') FROM journal "
                "WHERE json_extract(body, '$.type') = ? "
                "AND json_extract(body, '$.data.childRunId') IS NOT NULL",
                (base.CHILD_RUN_CHUNK,),
            )
            now = datetime.now(UTC).timestamp()
            db.execute("INSERT INTO store_facts (name, value) VALUES ('waiting_calls_since', ?)", (str(now),))
