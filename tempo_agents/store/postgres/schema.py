"""The PostgreSQL store's schema: its tables in the ``tempo_agents`` schema, and the migrations that make them.

``tempo_agents.schema_version`` says which of :data:`MIGRATIONS` have run. The store applies missing ones on first
use under an advisory lock (so workers starting together migrate once), and ``tempo-agents store migrate --store
URL`` does the same on demand.
"""

from __future__ import annotations

from typing import Any

import psycopg

from tempo_agents.errors import ConfigurationError

__all__ = ["MIGRATIONS", "migrate_schema"]

_MIGRATION_LOCK = 0x7465_6D70_6F5F_6167  # "tempo_ag": the advisory lock migrations run under

MIGRATIONS: tuple[str, ...] = (
    # 1: the tables of the SQLite store, with a per-run offset counter.
    """
    CREATE TABLE tempo_agents.journal (
        run_id text NOT NULL,
        seq bigint NOT NULL,
        key text,
        body text NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE UNIQUE INDEX journal_key ON tempo_agents.journal (run_id, key);
    CREATE TABLE tempo_agents.journal_head (
        run_id text PRIMARY KEY,
        next_seq bigint NOT NULL
    );
    CREATE TABLE tempo_agents.transcript (
        run_id text NOT NULL,
        step integer NOT NULL,
        part text NOT NULL,
        position integer NOT NULL,
        body text NOT NULL,
        memory_body text,
        revision bigint NOT NULL,
        PRIMARY KEY (run_id, step, part)
    );
    CREATE INDEX transcript_revision_order ON tempo_agents.transcript (run_id, revision);
    CREATE TABLE tempo_agents.transcript_revision (
        run_id text PRIMARY KEY,
        revision bigint NOT NULL
    );
    CREATE TABLE tempo_agents.outcomes (
        run_id text NOT NULL,
        key text NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE SEQUENCE tempo_agents.thread_messages_created;
    CREATE TABLE tempo_agents.thread_messages (
        thread_id text NOT NULL,
        resource_id text NOT NULL,
        run_id text NOT NULL,
        idx integer NOT NULL,
        created bigint NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (thread_id, resource_id, run_id, idx)
    );
    CREATE INDEX thread_messages_order ON tempo_agents.thread_messages (thread_id, resource_id, created, idx);
    CREATE TABLE tempo_agents.thread_state (
        thread_id text NOT NULL,
        type text NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (thread_id, type)
    );
    """,
    # 2: the calls that wait for a person (kept with the chunk that says so), the child runs' links (filled from
    # the journals of a store made before), and since when the waiting calls are kept.
    """
    CREATE TABLE tempo_agents.waiting_calls (
        run_id text NOT NULL,
        tool_call_id text NOT NULL,
        round integer NOT NULL,
        task_queue text NOT NULL,
        agent_id text NOT NULL,
        thread_id text,
        resource_id text,
        suspended_at double precision NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (run_id, tool_call_id)
    );
    CREATE INDEX waiting_calls_queue ON tempo_agents.waiting_calls (task_queue, suspended_at);
    CREATE TABLE tempo_agents.child_runs (
        run_id text PRIMARY KEY
    );
    INSERT INTO tempo_agents.child_runs (run_id)
        SELECT DISTINCT body::json->'data'->>'childRunId' FROM tempo_agents.journal
        WHERE body::json->>'type' = 'data-child-run' AND body::json->'data'->>'childRunId' IS NOT NULL;
    CREATE TABLE tempo_agents.store_facts (
        name text PRIMARY KEY,
        value text NOT NULL
    );
    INSERT INTO tempo_agents.store_facts (name, value)
        VALUES ('waiting_calls_since', extract(epoch FROM clock_timestamp())::text);
    """,
    # 3: usage counters of budgets (tokens and cost per scope and period), added to with a model step's outcome.
    """
    CREATE TABLE tempo_agents.usage_counters (
        scope text NOT NULL,
        period text NOT NULL,
        tokens bigint NOT NULL,
        cost_nanos bigint NOT NULL,
        PRIMARY KEY (scope, period)
    );
    """,
    # 4: the waiting runs counted from an index, not from every waiting call sorted.
    """
    CREATE INDEX waiting_calls_runs ON tempo_agents.waiting_calls (task_queue, run_id);
    """,
    # 5: the answers to waiting calls (who, what, when), kept with where the call waited, newest first.
    """
    CREATE TABLE tempo_agents.answered_calls (
        run_id text NOT NULL,
        tool_call_id text NOT NULL,
        round integer NOT NULL,
        task_queue text NOT NULL,
        agent_id text NOT NULL,
        thread_id text,
        resource_id text,
        answered_at double precision NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (run_id, tool_call_id, round)
    );
    CREATE INDEX answered_calls_queue ON tempo_agents.answered_calls (task_queue, answered_at);
    """,
    # 6: when each closed run's records expire under its retention (the retention sweeper deletes them then).
    """
    CREATE TABLE tempo_agents.run_expiries (
        run_id text PRIMARY KEY,
        expires_at double precision NOT NULL
    );
    CREATE INDEX run_expiries_due ON tempo_agents.run_expiries (expires_at);
    """,
    # 7: the audit trail (a hash chain) and its head, the row every append locks so appends take turns.
    """
    CREATE TABLE tempo_agents.audit (
        seq bigint PRIMARY KEY,
        id text NOT NULL UNIQUE,
        at text NOT NULL,
        principal text,
        tenant text,
        action text NOT NULL,
        target text,
        outcome text NOT NULL,
        status integer,
        code text,
        client text,
        user_agent text,
        completes text,
        prev_hash text NOT NULL,
        hash text NOT NULL
    );
    CREATE INDEX audit_completes ON tempo_agents.audit (completes);
    CREATE INDEX audit_at ON tempo_agents.audit (at);
    CREATE TABLE tempo_agents.audit_head (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        seq bigint NOT NULL,
        hash text NOT NULL
    );
    INSERT INTO tempo_agents.audit_head (seq, hash) VALUES (0, repeat('0', 64));
    """,
    # 8: the ids of runs erased on request, under which nothing more is written.
    """
    CREATE TABLE tempo_agents.erased_runs (
        run_id text PRIMARY KEY,
        erased_at double precision NOT NULL
    );
    """,
)
"""Schema versions, in order: version N is ``MIGRATIONS[N - 1]``. Append; never edit one that shipped."""


async def migrate_schema(conn: psycopg.AsyncConnection[Any]) -> tuple[int, int]:
    """Apply the missing :data:`MIGRATIONS` under an advisory lock; returns the versions before and after."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        await conn.execute("CREATE SCHEMA IF NOT EXISTS tempo_agents")
        await conn.execute("CREATE TABLE IF NOT EXISTS tempo_agents.schema_version (version integer NOT NULL)")
        row = await (await conn.execute("SELECT version FROM tempo_agents.schema_version")).fetchone()
        before = 0 if row is None else int(row[0])
        latest = len(MIGRATIONS)
        if before > latest:
            raise ConfigurationError(
                f"the store's schema is at version {before}, newer than this tempo-agents knows ({latest}): "
                "upgrade tempo-agents"
            )
        for version in range(before + 1, latest + 1):
            await conn.execute(MIGRATIONS[version - 1])
        if row is None:
            await conn.execute("INSERT INTO tempo_agents.schema_version (version) VALUES (%s)", (latest,))
        elif before != latest:
            await conn.execute("UPDATE tempo_agents.schema_version SET version = %s", (latest,))
    return before, latest
