"""PostgreSQL store: several workers on several machines, and their readers, share one database.

The same contract as the SQLite store (:class:`~tempo_agents.store.base.Store`; tests/store/test_contract.py runs one
suite on both), kept the PostgreSQL way:

- **Offsets.** Each run has a row in ``journal_head`` holding its next offset. An append locks that row first
  (``INSERT ... ON CONFLICT DO UPDATE ... RETURNING``), so appends to one run from any number of processes or
  hosts take turns: offsets stay contiguous, a keyed chunk is found (and replaced in place) by the writer that
  holds the lock, and an offset is visible to readers only after every smaller one is. Appends to different
  runs never wait for each other.
- **One transaction per write.** A tool result, its chunk and its saved outcome commit together or not at all;
  a writer killed mid-transaction leaves nothing behind (the server rolls it back and releases the lock).
- **Tailing.** Every append ends with ``pg_notify('tempo_agents_journal', '<last offset> <run id>')`` inside
  its transaction, so the notification is delivered only after the commit. Each process keeps one listening
  connection per database (a thread, shared by every store object on that URL) and wakes the readers of that
  run whose offset now exists; a reader on another host is woken within milliseconds, and nothing polls.
  A reader registers, then checks the run's latest offset once, so a commit landing between its last read and
  its registration is not missed. If the listening connection drops, every reader is woken to re-read once it
  is back, and meanwhile readers return at their timeout (tailing degrades to polling, never to silence).
- **Schema.** Tables live in the ``tempo_agents`` schema; ``tempo_agents.schema_version`` says which of
  :data:`MIGRATIONS` have run. The store applies missing ones on first use under an advisory lock (so workers
  starting together migrate once), and ``tempo-agents store migrate --store URL`` does the same on demand.
- **Lost connections.** A failure to reach the server is waited out for ``retry_seconds`` (longer inside an
  activity: ``store/patience.py``), then raised as :class:`~tempo_agents.errors.StoreUnavailableError`, which
  names the URL without its password and stays retryable in activities. Meanwhile one task per event loop
  probes the server with a connection of its own every :data:`PROBE_SECONDS`, and every waiting operation goes
  on as soon as a probe gets through: the pool's own reconnect backoff (which grows to half a minute) is cut
  short (``reconnect_timeout``), so a long outage costs no extra wait once the database is back. A write is
  retried in place only if it cannot have committed, or if repeating it is harmless (every chunk keyed): an
  unkeyed chunk whose commit may have happened is left to the activity's own retry rather than risk appending
  it twice.
- **A busy pool is not an outage.** An operation waits up to ``pool_timeout`` for a free pooled connection;
  when none came although the database answers and the pool is at ``max_size``, it fails with
  :class:`~tempo_agents.errors.StoreBusyError`, which says how to size the pool: ``?pool_size=N`` in the URL
  (also ``pool_timeout=S``), ``TEMPO_AGENTS_STORE_POOL_SIZE``, or the CLI's ``--store-pool-size``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from tempo_agents.errors import ConfigurationError, StoreBusyError, StoreUnavailableError
from tempo_agents.store import pool_size as sizing
from tempo_agents.store._waiters import Waiter, wake
from tempo_agents.store.base import (
    ANSWERED_COLUMNS,
    ANSWERED_ORDER,
    WAITING_COLUMNS,
    WAITING_ORDER,
    AnsweredCalls,
    ChunkWrite,
    GivenAnswer,
    JournalEntry,
    SavedOutcome,
    StartFence,
    Store,
    TranscriptEntry,
    UsageCharge,
    WaitingChange,
    WaitingRuns,
    answered_call,
    child_runs_in,
    ends_run,
    first_runs,
    group_waiting,
    to_json,
    transcript_rows,
    waiting_filter,
    waiting_row,
)
from tempo_agents.store.outages import STORE_OUTAGES
from tempo_agents.store.patience import store_patience
from tempo_agents.store.redaction import redact

_T = TypeVar("_T")
_Conn = psycopg.AsyncConnection[Any]

_log = logging.getLogger(__name__)

CHANNEL = "tempo_agents_journal"
"""The NOTIFY channel of journal appends; the payload is ``'<last offset> <run id>'``."""

_MIGRATION_LOCK = 0x7465_6D70_6F5F_6167  # "tempo_ag": the advisory lock migrations run under
_NOTIFY_TIMEOUT = 1.0
"""How often the listening thread looks up from its connection to see whether it should stop."""

PROBE_SECONDS = 0.25
"""While the database cannot be reached, how often a probe tries to connect."""
_RECONNECT_TIMEOUT = 1.0
"""How long the pool retries a connection on its own before leaving it to the next operation that needs one."""
_CHECK_SECONDS = 2.0
"""How long :meth:`PostgresStore.check` waits for a pooled connection before it connects on its own."""
_RETRY_PAUSE_CAP = 0.5
"""The longest pause between two tries of one operation (they start at 0.05 s and double)."""

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
)
"""Schema versions, in order: version N is ``MIGRATIONS[N - 1]``. Append; never edit one that shipped."""

_OUTCOME = "SELECT body FROM tempo_agents.outcomes WHERE run_id = %s AND key = %s"
_FENCE = _OUTCOME + " FOR SHARE"
"""A start's count read by the writes it fences (``StartFence``), locked until they commit."""
_WAITING_SLACK = 16
"""Waiting calls read past a page's end at first, for runs that wait on several calls."""
_CHARGE = """
INSERT INTO tempo_agents.usage_counters AS u (scope, period, tokens, cost_nanos) VALUES (%s, %s, %s, %s)
ON CONFLICT (scope, period) DO UPDATE
SET tokens = u.tokens + excluded.tokens, cost_nanos = u.cost_nanos + excluded.cost_nanos
"""
"""Adds to a usage counter; charges are sorted by their key, so two transactions lock counter rows in one order."""
_COUNT_START = """
INSERT INTO tempo_agents.outcomes AS o (run_id, key, body) VALUES (%s, %s, '{"starts": 1}')
ON CONFLICT (run_id, key) DO UPDATE SET body = json_build_object('starts', (o.body::json->>'starts')::int + 1)::text
RETURNING body
"""
_LOCK_HEAD = """
INSERT INTO tempo_agents.journal_head (run_id, next_seq) VALUES (%s, 0)
ON CONFLICT (run_id) DO UPDATE SET next_seq = tempo_agents.journal_head.next_seq
RETURNING next_seq
"""
"""The run's next offset, with its row locked until the transaction ends (appends to a run take turns)."""

_PUT_CHUNK = """
INSERT INTO tempo_agents.journal (run_id, seq, key, body) VALUES (%s, %s, %s, %s)
ON CONFLICT (run_id, seq) DO UPDATE SET key = excluded.key, body = excluded.body
"""

_ADVANCE_AND_NOTIFY = """
WITH advanced AS (UPDATE tempo_agents.journal_head SET next_seq = %s WHERE run_id = %s)
SELECT pg_notify(%s, %s)
"""
"""Move the run's next offset past the chunks written and tell listeners, who hear of it once committed."""

_NEXT_REVISION = """
INSERT INTO tempo_agents.transcript_revision (run_id, revision) VALUES (%s, 1)
ON CONFLICT (run_id) DO UPDATE SET revision = tempo_agents.transcript_revision.revision + 1
RETURNING revision
"""

_PUT_TRANSCRIPT = """
INSERT INTO tempo_agents.transcript (run_id, step, part, position, body, memory_body, revision)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id, step, part) DO UPDATE SET
    position = excluded.position, body = excluded.body, memory_body = excluded.memory_body,
    revision = excluded.revision
"""

_TRANSCRIPT_CHANGES = """
SELECT rev.revision, t.step, t.part, t.position, t.body, t.memory_body
FROM (SELECT (SELECT revision FROM tempo_agents.transcript_revision WHERE run_id = %(run)s) AS revision) rev
LEFT JOIN tempo_agents.transcript t
    ON t.run_id = %(run)s
    AND t.revision > CASE WHEN rev.revision IS NOT NULL AND %(after)s > 0 THEN %(after)s ELSE -1 END
ORDER BY t.step, t.position, t.part
"""
"""One statement, so one snapshot: the revision returned covers exactly the rows returned."""


class _Attempt:
    """What one try of an operation got to: past this point a lost connection may hide a commit."""

    __slots__ = ("committing",)

    def __init__(self) -> None:
        self.committing = False


class PostgresStore(Store):
    """A :class:`Store` in a PostgreSQL database (module docstring): ``postgresql://user:pw@host:5432/db``.

    Connections come from a psycopg ``AsyncConnectionPool`` opened on first use (``min_size``..``max_size``),
    after one direct connection has created or upgraded the schema. ``max_size`` and ``pool_timeout`` default to
    the URL's ``pool_size`` and ``pool_timeout`` parameters, then ``$TEMPO_AGENTS_STORE_POOL_SIZE``, then 10 and
    30 s.
    """

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int | None = None,
        retry_seconds: float = 20.0,
        connect_timeout: float = 10.0,
        pool_timeout: float | None = None,
    ) -> None:
        self.url = url
        self.display_url = redact(url)
        conninfo, ours = sizing.split_url(url)
        try:
            conninfo_to_dict(conninfo)
        except psycopg.ProgrammingError as error:
            raise ConfigurationError(f"invalid PostgreSQL store URL {self.display_url}: {_one_line(error)}") from None
        self._conninfo = conninfo
        self.max_size = max_size if max_size is not None else sizing.pool_size(ours.get("pool_size"), self.display_url)
        self.min_size = min(min_size, self.max_size)
        self.pool_timeout = (
            pool_timeout
            if pool_timeout is not None
            else sizing.pool_timeout(ours.get("pool_timeout"), self.display_url)
        )
        self.retry_seconds = retry_seconds
        self.connect_timeout = connect_timeout
        self._pool: AsyncConnectionPool[_Conn] | None = None
        self._pool_loop: asyncio.AbstractEventLoop | None = None
        self._opening: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self._probe: asyncio.Task[None] | None = None
        self._asking: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self._answered_at = -1e9
        self._probe_error = ""
        self._listener: _Listener | None = None
        self._closed = False

    # Connections

    def _unavailable(self, error: BaseException | str, waited: float) -> StoreUnavailableError:
        tried = f" (retried for {waited:.0f} s)" if waited >= 1 else ""
        reason = error if isinstance(error, str) else _one_line(error)
        return StoreUnavailableError(f"cannot reach the PostgreSQL store at {self.display_url}{tried}: {reason}")

    def _busy(self, pool: AsyncConnectionPool[_Conn], waited: float) -> StoreBusyError:
        waiting = pool.get_stats().get("requests_waiting", 0)
        return StoreBusyError(
            f"the PostgreSQL store at {self.display_url} is busy: all {self.max_size} connections of its pool stayed "
            f"in use for {waited:.0f} s ({waiting} more operations waiting); the database answers. Size "
            f"the pool for the load: ?pool_size=N in the store URL, {sizing.STORE_POOL_SIZE_ENV}, or --store-pool-size"
        )

    def _connect_timeout(self) -> int:
        return max(1, round(self.connect_timeout))

    async def _connect(self) -> _Conn:
        """One connection of its own (schema changes), retried like any operation."""
        started = time.monotonic()
        patience = store_patience(self.retry_seconds)
        delay = 0.05
        while True:
            try:
                return await psycopg.AsyncConnection.connect(
                    self._conninfo, autocommit=True, connect_timeout=self._connect_timeout()
                )
            except psycopg.OperationalError as error:
                waited = time.monotonic() - started
                if waited + delay > patience or self._closed:
                    raise self._unavailable(error, waited) from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RETRY_PAUSE_CAP)

    async def _ready_pool(self) -> AsyncConnectionPool[_Conn]:
        if self._closed:
            raise RuntimeError(f"the store {self.display_url} is closed")
        loop = asyncio.get_running_loop()
        if self._pool is not None and self._pool_loop is loop:
            return self._pool
        async with self._opening.setdefault(loop, asyncio.Lock()):
            if self._pool is not None and self._pool_loop is loop:
                return self._pool
            await self.migrate()
            # A pool belongs to the event loop that opened it; a store used from a new loop (a second
            # asyncio.run) gets a new pool, and the old one is dropped with its loop.
            pool: AsyncConnectionPool[_Conn] = AsyncConnectionPool(
                self._conninfo,
                min_size=self.min_size,
                max_size=self.max_size,
                kwargs={"autocommit": True, "connect_timeout": self._connect_timeout()},
                timeout=self.pool_timeout,
                reconnect_timeout=_RECONNECT_TIMEOUT,
                name=f"tempo-agents {self.display_url}",
                open=False,
            )
            await pool.open(wait=False)
            self._pool, self._pool_loop = pool, loop
            return pool

    async def _run(self, op: Callable[[_Conn, _Attempt], Awaitable[_T]], *, idempotent: bool = True) -> _T:
        """Run ``op`` on a pooled connection, waiting out a database that cannot be reached (module docstring)."""
        pool = await self._ready_pool()
        started = time.monotonic()
        deadline = started + store_patience(self.retry_seconds)
        delay = 0.05
        while True:
            attempt = _Attempt()
            wait = self.pool_timeout
            try:
                if self._probe is not None and not self._probe.done():  # known to be down: no use queueing
                    await self._reachable_by(deadline, started)
                wait = min(self.pool_timeout, max(0.1, deadline - time.monotonic()))
                async with pool.connection(timeout=wait) as conn:
                    return await op(conn, attempt)
            except psycopg.OperationalError as error:
                waited = time.monotonic() - started
                if (attempt.committing and not idempotent) or self._closed:
                    raise self._unavailable(error, waited) from None
                full = isinstance(error, PoolTimeout) and pool.get_stats().get("pool_size", 0) >= self.max_size
                if full and await self._answers_lately():
                    raise self._busy(pool, wait) from None
                _log.debug("store %s: retrying after %s", self.display_url, _one_line(error))
                if time.monotonic() + delay > deadline:
                    raise self._unavailable(error, waited) from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RETRY_PAUSE_CAP)
                self._probe_error = _one_line(error)
                await self._reachable_by(deadline, started)

    async def check(self) -> None:
        if self._closed:
            raise RuntimeError(f"the store {self.display_url} is closed")
        if self._probe is not None and not self._probe.done():  # an outage is being waited out
            raise self._unavailable(self._probe_error or "no answer", 0)
        pool = self._pool
        if pool is None or self._pool_loop is not asyncio.get_running_loop():
            if not await self._answers():
                raise self._unavailable(self._probe_error, 0)
            return
        try:
            async with pool.connection(timeout=_CHECK_SECONDS) as conn:
                await conn.execute("SELECT 1")
        except psycopg.OperationalError as error:  # a connection of before an outage, or a busy pool
            if not await self._answers():
                raise self._unavailable(self._probe_error or _one_line(error), 0) from None

    async def _answers_lately(self) -> bool:
        """:meth:`_answers`, asked once at a time and trusted for a second: when a full pool makes many operations
        ask at once, the database gets one extra connection, not one per operation."""
        async with self._asking.setdefault(asyncio.get_running_loop(), asyncio.Lock()):
            if time.monotonic() - self._answered_at < 1.0:
                return True
            if await self._answers():
                self._answered_at = time.monotonic()
                return True
            return False

    async def _answers(self) -> bool:
        """Whether the database accepts a new connection now (one try)."""
        try:
            conn = await psycopg.AsyncConnection.connect(
                self._conninfo, autocommit=True, connect_timeout=self._connect_timeout()
            )
        except psycopg.OperationalError as error:
            self._probe_error = _one_line(error)
            return False
        await conn.close()
        return True

    async def _reachable_by(self, deadline: float, started: float) -> None:
        """Return once the database accepts connections again; :class:`StoreUnavailableError` at ``deadline``.

        One probe per event loop serves every waiting operation, so an outage costs the database one connection
        attempt per :data:`PROBE_SECONDS`, however many operations wait."""
        loop = asyncio.get_running_loop()
        probe = self._probe
        if probe is None or probe.done() or probe.get_loop() is not loop:
            probe = self._probe = loop.create_task(self._probe_until_reachable())
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            await asyncio.wait_for(asyncio.shield(probe), remaining)
        except TimeoutError:
            raise self._unavailable(self._probe_error or "no answer", time.monotonic() - started) from None

    async def _probe_until_reachable(self) -> None:
        outage: int | None = None
        try:
            while not self._closed:
                if await self._answers():
                    pool = self._pool
                    if pool is not None and self._pool_loop is asyncio.get_running_loop():
                        await pool.check()  # connections of before the outage are dropped, new ones made at once
                    if outage is not None:
                        lasted = STORE_OUTAGES.end(outage)
                        outage = None
                        _log.warning("the store %s answers again after %.1f s", self.display_url, lasted)
                    return
                if outage is None:
                    outage = STORE_OUTAGES.begin()
                    _log.warning(
                        "cannot reach the store %s (%s): waiting for it, runs stand still meanwhile",
                        self.display_url,
                        self._probe_error,
                    )
                await asyncio.sleep(PROBE_SECONDS)
        finally:
            if outage is not None:  # the store closed (or the probe was cancelled) before the database came back
                STORE_OUTAGES.end(outage)

    async def migrate(self) -> str:
        conn = await self._connect()
        try:
            before, after = await _migrate(conn)
        finally:
            await conn.close()
        if before == after:
            return f"{self.display_url}: schema version {after}, up to date"
        return f"{self.display_url}: schema upgraded from version {before} to {after}"

    # Journal

    async def record(
        self,
        run_id: str,
        entries: Sequence[TranscriptEntry],
        writes: Sequence[ChunkWrite],
        outcome: SavedOutcome | None = None,
        waiting: WaitingChange | None = None,
        charges: Sequence[UsageCharge] = (),
        fence: StartFence | None = None,
    ) -> list[int]:
        async def op(conn: _Conn, attempt: _Attempt) -> tuple[list[int], int]:
            async with conn.transaction():
                if fence is not None:
                    # FOR SHARE: a start being counted (it updates this row) and these writes take turns, and
                    # the count read is the newest committed one.
                    cursor = await conn.execute(_FENCE, (run_id, fence.counter_key))
                    counted = await cursor.fetchone()
                    fence.check(run_id, None if counted is None else json.loads(counted[0]))
                done = await _record_in(conn, run_id, entries, writes, outcome, charges)
                await _change_waiting(conn, run_id, writes, waiting)
                attempt.committing = True
            return done

        if not (entries or writes or outcome or waiting or charges):
            return []
        offsets, last = await self._run(op, idempotent=not charges and all(w.key is not None for w in writes))
        if writes and self._listener is not None:
            self._listener.wake_up_to(run_id, last)  # readers in this process need not wait for the NOTIFY
        return offsets

    async def read_chunks(self, run_id: str, offset: int = 0, limit: int = 1000) -> list[JournalEntry]:
        async def op(conn: _Conn, attempt: _Attempt) -> list[JournalEntry]:
            cursor = await conn.execute(
                "SELECT seq, body FROM tempo_agents.journal WHERE run_id = %s AND seq >= %s ORDER BY seq LIMIT %s",
                (run_id, offset, limit),
            )
            return [JournalEntry(offset=int(seq), chunk=json.loads(body)) for seq, body in await cursor.fetchall()]

        return await self._run(op)

    async def offset_of(self, run_id: str, key: str) -> int | None:
        async def op(conn: _Conn, attempt: _Attempt) -> int | None:
            cursor = await conn.execute(
                "SELECT seq FROM tempo_agents.journal WHERE run_id = %s AND key = %s", (run_id, key)
            )
            row = await cursor.fetchone()
            return None if row is None else int(row[0])

        return await self._run(op)

    async def _latest_offset(self, run_id: str) -> int:
        async def op(conn: _Conn, attempt: _Attempt) -> int:
            cursor = await conn.execute("SELECT next_seq FROM tempo_agents.journal_head WHERE run_id = %s", (run_id,))
            row = await cursor.fetchone()
            return -1 if row is None else int(row[0]) - 1

        return await self._run(op)

    async def wait_for_chunks(self, run_id: str, offset: int, timeout: float) -> None:
        if self._closed:
            return
        await self._ready_pool()  # the schema exists before anyone listens
        if self._listener is None:
            self._listener = _Listener.acquire(self._conninfo, self.display_url)
        listener = self._listener
        if not listener.ready.is_set():  # waited for on this loop: an outage with many readers holds no thread
            await listener.until_ready(min(timeout, self.connect_timeout))
        waiter = Waiter.here(offset)
        listener.add(run_id, waiter)
        try:
            # Registered first, then checked: a commit before the check is seen by it, one after is notified.
            if await self._latest_offset(run_id) >= offset:
                return
            await asyncio.wait_for(waiter.future, timeout=timeout)
        except TimeoutError:
            pass
        finally:
            listener.remove(run_id, waiter)

    async def usage_counters(self, counters: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, int]]:
        async def op(conn: _Conn, attempt: _Attempt) -> dict[tuple[str, str], tuple[int, int]]:
            cursor = await conn.execute(
                "SELECT scope, period, tokens, cost_nanos FROM tempo_agents.usage_counters "
                "WHERE (scope, period) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
                ([scope for scope, _ in counters], [period for _, period in counters]),
            )
            return {(scope, period): (int(t), int(c)) for scope, period, t, c in await cursor.fetchall()}

        return await self._run(op) if counters else {}

    async def saved_outcome(self, run_id: str, key: str) -> dict[str, Any] | None:
        async def op(conn: _Conn, attempt: _Attempt) -> dict[str, Any] | None:
            cursor = await conn.execute(_OUTCOME, (run_id, key))
            row = await cursor.fetchone()
            return None if row is None else dict(json.loads(row[0]))

        return await self._run(op)

    async def saved_or_counted(self, run_id: str, key: str, counter_key: str) -> tuple[dict[str, Any] | None, int]:
        async def op(conn: _Conn, attempt: _Attempt) -> tuple[dict[str, Any] | None, int]:
            async with conn.transaction():
                cursor = await conn.execute(_OUTCOME, (run_id, key))
                saved = await cursor.fetchone()
                if saved is not None:
                    return dict(json.loads(saved[0])), 0
                cursor = await conn.execute(_COUNT_START, (run_id, counter_key))
                counted = await cursor.fetchone()
                assert counted is not None
                attempt.committing = True
            return None, int(json.loads(counted[0])["starts"])

        return await self._run(op, idempotent=False)

    # Waiting calls

    async def waiting_runs(
        self,
        task_queue: str,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        limit: int | None = None,
        skip: int = 0,
    ) -> WaitingRuns:
        clauses, values = waiting_filter("%s", task_queue, agent_id, thread_id, resource_id)
        where = " AND ".join(clauses) + " AND run_id NOT IN (SELECT run_id FROM tempo_agents.child_runs)"

        async def op(conn: _Conn, attempt: _Attempt) -> WaitingRuns:
            async with conn.transaction():  # one snapshot: the total and the page agree
                await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                cursor = await conn.execute(
                    f"SELECT COUNT(DISTINCT run_id) FROM tempo_agents.waiting_calls WHERE {where}", values
                )
                counted = await cursor.fetchone()
                wanted = None if limit is None else skip + limit
                read = None if wanted is None else wanted + _WAITING_SLACK
                while True:  # the calls up to the page's end, more when runs wait on several calls
                    cursor = await conn.execute(
                        f"SELECT run_id FROM tempo_agents.waiting_calls WHERE {where} {WAITING_ORDER} LIMIT %s",
                        [*values, read],
                    )
                    calls = [row[0] for row in await cursor.fetchall()]
                    ids = first_runs(calls, wanted)
                    if read is None or len(calls) < read or wanted is None or len(ids) >= wanted:
                        break
                    read *= 4
                ids = ids[skip:]
                cursor = await conn.execute(
                    f"SELECT {WAITING_COLUMNS} FROM tempo_agents.waiting_calls WHERE run_id = ANY(%s) "
                    "ORDER BY suspended_at, tool_call_id",
                    (ids,),
                )
                rows = await cursor.fetchall()
            return WaitingRuns(runs=group_waiting(ids, rows), total=0 if counted is None else int(counted[0]))

        return await self._run(op)

    async def forget_waiting(
        self, run_id: str, tool_call_id: str, round: int, answer: GivenAnswer | None = None
    ) -> None:
        async def op(conn: _Conn, attempt: _Attempt) -> None:
            async with conn.transaction():
                if answer is not None:
                    await conn.execute(
                        "INSERT INTO tempo_agents.answered_calls (run_id, tool_call_id, round, task_queue, agent_id,"
                        " thread_id, resource_id, answered_at, body) SELECT run_id, tool_call_id, round, task_queue,"
                        " agent_id, thread_id, resource_id, %s, %s FROM tempo_agents.waiting_calls"
                        " WHERE run_id = %s AND tool_call_id = %s AND round <= %s ON CONFLICT DO NOTHING",
                        (answer.answered_at, to_json(answer.answer), run_id, tool_call_id, round),
                    )
                await conn.execute(
                    "DELETE FROM tempo_agents.waiting_calls WHERE run_id = %s AND tool_call_id = %s AND round <= %s",
                    (run_id, tool_call_id, round),
                )

        await self._run(op)

    async def answered_calls(
        self, task_queue: str, *, agent_id: str | None = None, limit: int | None = None, skip: int = 0
    ) -> AnsweredCalls:
        clauses, values = waiting_filter("%s", task_queue, agent_id, None, None)
        where = " AND ".join(clauses) + " AND run_id NOT IN (SELECT run_id FROM tempo_agents.child_runs)"

        async def op(conn: _Conn, attempt: _Attempt) -> AnsweredCalls:
            async with conn.transaction():  # one snapshot: the total and the page agree
                await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                cursor = await conn.execute(f"SELECT COUNT(*) FROM tempo_agents.answered_calls WHERE {where}", values)
                counted = await cursor.fetchone()
                cursor = await conn.execute(
                    f"SELECT {ANSWERED_COLUMNS} FROM tempo_agents.answered_calls WHERE {where} {ANSWERED_ORDER}"
                    " LIMIT %s OFFSET %s",
                    [*values, limit, skip],
                )
                rows = await cursor.fetchall()
            total = 0 if counted is None else int(counted[0])
            return AnsweredCalls(answers=[answered_call(row) for row in rows], total=total)

        return await self._run(op)

    async def waiting_kept_since(self) -> float:
        async def op(conn: _Conn, attempt: _Attempt) -> float:
            cursor = await conn.execute("SELECT value FROM tempo_agents.store_facts WHERE name = 'waiting_calls_since'")
            row = await cursor.fetchone()
            assert row is not None
            return float(row[0])

        return await self._run(op)

    # Transcripts

    async def put_transcript(self, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
        if entries:
            await self.record(run_id, entries, ())

    async def get_transcript(self, run_id: str) -> list[TranscriptEntry]:
        entries, _ = await self.transcript_changes(run_id, 0)
        return entries

    async def transcript_changes(self, run_id: str, after_revision: int) -> tuple[list[TranscriptEntry], int]:
        async def op(conn: _Conn, attempt: _Attempt) -> tuple[list[TranscriptEntry], int]:
            cursor = await conn.execute(_TRANSCRIPT_CHANGES, {"run": run_id, "after": after_revision})
            rows = await cursor.fetchall()
            revision = 0 if not rows or rows[0][0] is None else int(rows[0][0])
            entries = [
                TranscriptEntry(
                    step=s, part=p, position=pos, message=json.loads(b), memory_message=json.loads(m) if m else None
                )
                for _, s, p, pos, b, m in rows
                if s is not None
            ]
            return entries, revision

        return await self._run(op)

    # Memory threads and thread state

    async def append_thread_messages(
        self, thread_id: str, resource_id: str, run_id: str, messages: Sequence[dict[str, Any]]
    ) -> None:
        async def op(conn: _Conn, attempt: _Attempt) -> None:
            async with conn.transaction(), conn.cursor() as cursor:
                where = "thread_id = %s AND resource_id = %s"
                await cursor.execute(
                    f"SELECT idx, created FROM tempo_agents.thread_messages WHERE {where} AND run_id = %s",
                    (thread_id, resource_id, run_id),
                )
                kept: dict[int, int] = {idx: created for idx, created in await cursor.fetchall()}
                last = max(kept.values(), default=None)
                later = None
                if last is not None:
                    await cursor.execute(
                        f"SELECT 1 FROM tempo_agents.thread_messages WHERE {where} AND created > %s AND run_id <> %s "
                        "LIMIT 1",
                        (thread_id, resource_id, last, run_id),
                    )
                    later = await cursor.fetchone()
                if last is None or later is not None:
                    await cursor.execute("SELECT nextval('tempo_agents.thread_messages_created')")
                    row = await cursor.fetchone()
                    assert row is not None
                    fresh = int(row[0])
                else:
                    fresh = last
                await cursor.executemany(
                    "INSERT INTO tempo_agents.thread_messages (thread_id, resource_id, run_id, idx, created, body) "
                    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (thread_id, resource_id, run_id, idx) "
                    "DO UPDATE SET body = excluded.body",
                    [
                        (thread_id, resource_id, run_id, i, kept.get(i, fresh), to_json(m))
                        for i, m in enumerate(messages)
                    ],
                )

        if messages:
            await self._run(op)

    async def remove_run_from_thread(self, thread_id: str, resource_id: str, run_id: str) -> int:
        async def op(conn: _Conn, attempt: _Attempt) -> int:
            cursor = await conn.execute(
                "DELETE FROM tempo_agents.thread_messages WHERE thread_id = %s AND resource_id = %s AND run_id = %s",
                (thread_id, resource_id, run_id),
            )
            return int(cursor.rowcount)

        return await self._run(op)

    async def get_thread_messages(self, thread_id: str, resource_id: str) -> list[dict[str, Any]]:
        async def op(conn: _Conn, attempt: _Attempt) -> list[dict[str, Any]]:
            cursor = await conn.execute(
                "SELECT body FROM tempo_agents.thread_messages WHERE thread_id = %s AND resource_id = %s "
                "ORDER BY created, idx",
                (thread_id, resource_id),
            )
            return [json.loads(body) for (body,) in await cursor.fetchall()]

        return await self._run(op)

    async def thread_messages_after(self, thread_id: str, resource_id: str, run_id: str) -> list[dict[str, Any]]:
        async def op(conn: _Conn, attempt: _Attempt) -> list[dict[str, Any]]:
            cursor = await conn.execute(
                "SELECT body FROM tempo_agents.thread_messages WHERE thread_id = %s AND resource_id = %s "
                "AND run_id <> %s AND created > (SELECT COALESCE(MAX(created), 0) FROM tempo_agents.thread_messages "
                "WHERE thread_id = %s AND resource_id = %s AND run_id = %s) ORDER BY created, idx",
                (thread_id, resource_id, run_id, thread_id, resource_id, run_id),
            )
            return [json.loads(body) for (body,) in await cursor.fetchall()]

        return await self._run(op)

    async def get_thread_state(self, thread_id: str, state_type: str) -> Any | None:
        async def op(conn: _Conn, attempt: _Attempt) -> Any | None:
            cursor = await conn.execute(
                "SELECT body FROM tempo_agents.thread_state WHERE thread_id = %s AND type = %s",
                (thread_id, state_type),
            )
            row = await cursor.fetchone()
            return None if row is None else json.loads(row[0])

        return await self._run(op)

    async def set_thread_state(self, thread_id: str, state_type: str, value: Any) -> None:
        async def op(conn: _Conn, attempt: _Attempt) -> None:
            await conn.execute(
                "INSERT INTO tempo_agents.thread_state (thread_id, type, body) VALUES (%s, %s, %s) "
                "ON CONFLICT (thread_id, type) DO UPDATE SET body = excluded.body",
                (thread_id, state_type, to_json(value)),
            )

        await self._run(op)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        probe, self._probe = self._probe, None
        if probe is not None and not probe.done() and probe.get_loop() is asyncio.get_running_loop():
            probe.cancel()
        if self._listener is not None:
            self._listener.release()
            self._listener = None
        pool, self._pool = self._pool, None
        if pool is not None and self._pool_loop is asyncio.get_running_loop():
            await pool.close()


async def _migrate(conn: _Conn) -> tuple[int, int]:
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


_WAITING_UPDATED = ("round", "task_queue", "agent_id", "thread_id", "resource_id", "suspended_at", "body")


async def _change_waiting(
    conn: _Conn, run_id: str, writes: Sequence[ChunkWrite], waiting: WaitingChange | None
) -> None:
    """The waiting calls' part of :meth:`PostgresStore.record`, inside the caller's transaction."""
    async with conn.cursor() as cursor:
        children = child_runs_in(writes)
        if children:
            await cursor.executemany(
                "INSERT INTO tempo_agents.child_runs (run_id) VALUES (%s) ON CONFLICT DO NOTHING",
                [(child,) for child in children],
            )
        if ends_run(writes):
            await cursor.execute("DELETE FROM tempo_agents.waiting_calls WHERE run_id = %s", (run_id,))
            return
        if waiting is None:
            return
        if waiting.answered:
            await cursor.execute(
                "DELETE FROM tempo_agents.waiting_calls WHERE run_id = %s AND tool_call_id = ANY(%s)",
                (run_id, list(waiting.answered)),
            )
        if waiting.waits:
            await cursor.executemany(
                f"INSERT INTO tempo_agents.waiting_calls ({WAITING_COLUMNS}) VALUES ({', '.join(['%s'] * 9)}) "
                "ON CONFLICT (run_id, tool_call_id) DO UPDATE SET "
                + ", ".join(f"{column} = excluded.{column}" for column in _WAITING_UPDATED),
                [waiting_row(call) for call in waiting.waits],
            )
        if waiting.readdressed:
            await cursor.executemany(
                "UPDATE tempo_agents.waiting_calls SET body = (body::jsonb || %s::jsonb)::text "
                "WHERE run_id = %s AND tool_call_id = %s AND round = %s",
                [(call.body_patch(), run_id, call.tool_call_id, call.round) for call in waiting.readdressed],
            )


async def _record_in(
    conn: _Conn,
    run_id: str,
    entries: Sequence[TranscriptEntry],
    writes: Sequence[ChunkWrite],
    outcome: SavedOutcome | None,
    charges: Sequence[UsageCharge] = (),
) -> tuple[list[int], int]:
    """The writes of :meth:`PostgresStore.record` inside the caller's transaction; returns the chunks' offsets
    and the run's last offset (-1 without chunks).

    The run's offset row is locked first (appends to one run take turns until commit); the transcript's
    revision row after it, the same order in every write, so two writers never wait for each other in a cycle.
    """
    keys = [w.key for w in writes if w.key is not None]
    async with conn.cursor() as head, conn.cursor() as found, conn.cursor() as rev, conn.cursor() as cursor:
        if writes:
            await head.execute(_LOCK_HEAD, (run_id,))
        if keys:  # runs after the lock is held: no other writer of this run can add one of these keys meanwhile
            await found.execute(
                "SELECT key, seq FROM tempo_agents.journal WHERE run_id = %s AND key = ANY(%s)", (run_id, keys)
            )
        if entries:
            await rev.execute(_NEXT_REVISION, (run_id,))
            row = await rev.fetchone()
            assert row is not None
            revision = int(row[0])
            await cursor.executemany(
                _PUT_TRANSCRIPT,
                transcript_rows(run_id, entries, revision),
            )
        if outcome is not None:
            await cursor.execute(
                "INSERT INTO tempo_agents.outcomes (run_id, key, body) VALUES (%s, %s, %s) "
                "ON CONFLICT (run_id, key) DO UPDATE SET body = excluded.body",
                (run_id, outcome.key, to_json(outcome.value)),
            )
        if charges:  # after the run's offset row: every writer locks its run first, then counters in key order
            await cursor.executemany(_CHARGE, sorted((c.scope, c.period, c.tokens, c.cost_nanos) for c in charges))
        if not writes:
            return [], -1
        row = await head.fetchone()
        assert row is not None
        next_seq = int(row[0])
        seq_of: dict[str, int] = {key: int(seq) for key, seq in await found.fetchall()} if keys else {}
        offsets: list[int] = []
        rows: list[tuple[str, int, str | None, str]] = []
        for write in writes:
            seq = seq_of.get(write.key) if write.key is not None else None
            if seq is None:
                seq, next_seq = next_seq, next_seq + 1
                if write.key is not None:
                    seq_of[write.key] = seq
            offsets.append(seq)
            rows.append((run_id, seq, write.key, to_json(write.chunk)))
        if len(rows) == 1:
            await cursor.execute(_PUT_CHUNK, rows[0])  # executemany would set up a pipeline for one row
        else:
            await cursor.executemany(_PUT_CHUNK, rows)
        last = next_seq - 1
        await cursor.execute(_ADVANCE_AND_NOTIFY, (next_seq, run_id, CHANNEL, f"{last} {run_id}"))
        return offsets, last


class _Listener:
    """The one listening connection of this process for a database, and the readers waiting on it.

    A thread with a blocking psycopg connection: it sleeps in ``select`` until a notification arrives (no CPU
    while nothing is appended) and wakes readers on their own event loops, so it serves every store object
    and every event loop of the process alike.
    """

    _instances: ClassVar[dict[str, _Listener]] = {}
    """One per database URL, process-wide."""
    _instances_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, url: str, display_url: str) -> None:
        self.url = url
        self.display_url = display_url
        self.ready = threading.Event()
        self._users = 0
        self._stopping = False
        self._lock = threading.Lock()
        self._waiters: dict[str, list[Waiter]] = {}
        self._ready_waiters: list[Waiter] = []
        """Readers waiting for the listening connection to be up (:meth:`until_ready`)."""
        self._thread = threading.Thread(target=self._listen, name="tempo-agents-pg-listen", daemon=True)

    @classmethod
    def acquire(cls, url: str, display_url: str) -> _Listener:
        with cls._instances_lock:
            listener = cls._instances.get(url)
            if listener is None:
                listener = cls._instances[url] = _Listener(url, display_url)
                listener._thread.start()
            listener._users += 1
            return listener

    def release(self) -> None:
        with self._instances_lock:
            self._users -= 1
            if self._users == 0:
                self._stopping = True  # the thread leaves within _NOTIFY_TIMEOUT
                if self._instances.get(self.url) is self:
                    del self._instances[self.url]
        if self._stopping:
            self.wake_all()

    async def until_ready(self, timeout: float) -> None:
        """Return once the listening connection is up, or after ``timeout`` seconds (on the caller's loop)."""
        waiter = Waiter.here(0)
        with self._lock:
            self._ready_waiters.append(waiter)
        try:
            if not self.ready.is_set():  # set before the waiter was added: nobody would wake it
                await asyncio.wait_for(waiter.future, timeout=timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._ready_waiters = [w for w in self._ready_waiters if w is not waiter]

    def add(self, run_id: str, waiter: Waiter) -> None:
        with self._lock:
            self._waiters.setdefault(run_id, []).append(waiter)

    def remove(self, run_id: str, waiter: Waiter) -> None:
        with self._lock:
            remaining = [w for w in self._waiters.get(run_id, ()) if w is not waiter]
            if remaining:
                self._waiters[run_id] = remaining
            else:
                self._waiters.pop(run_id, None)

    def wake_up_to(self, run_id: str, last: int) -> None:
        """Wake the run's readers whose offset is at most ``last``."""
        with self._lock:
            waiters = self._waiters.get(run_id)
            if not waiters:
                return
            due = [w for w in waiters if w.offset <= last]
            if not due:
                return
            keep = [w for w in waiters if w.offset > last]
            if keep:
                self._waiters[run_id] = keep
            else:
                del self._waiters[run_id]
        wake(due)

    def wake_all(self) -> None:
        """Wake every reader: those waiting for a chunk, and those waiting for the connection to be up."""
        with self._lock:
            due = [w for waiters in self._waiters.values() for w in waiters]
            self._waiters.clear()
            due += self._ready_waiters
        wake(due)

    def _listen(self) -> None:
        delay = 0.1
        failing = False
        while not self._stopping:
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.ready.set()
                    delay, failing = 0.1, False
                    self.wake_all()  # anything committed while nobody listened: every reader re-reads
                    while not self._stopping:
                        for notify in conn.notifies(timeout=_NOTIFY_TIMEOUT):
                            last, _, run_id = notify.payload.partition(" ")
                            if last.lstrip("-").isdigit():  # anything else on the channel is not ours
                                self.wake_up_to(run_id, int(last))
            except psycopg.Error as error:
                self.ready.clear()
                if self._stopping:
                    return
                # Readers still return at their timeout and re-read: tailing degrades to polling meanwhile.
                _log.log(
                    logging.DEBUG if failing else logging.WARNING,
                    "listening to %s for appends failed (retrying): %s",
                    self.display_url,
                    _one_line(error),
                )
                failing = True
                time.sleep(delay)
                delay = min(delay * 2, 1.0)  # back within a second of the database, whatever the outage's length


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text or type(error).__name__
