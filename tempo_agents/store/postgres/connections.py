"""The PostgreSQL store's connections: a pool per event loop, retries, and one probe while the database is away.

Connections come from a psycopg ``AsyncConnectionPool`` opened on first use, after one direct connection has
created or upgraded the schema. A failure to reach the server is waited out for ``retry_seconds`` (longer inside an
activity: ``store/patience.py``), then raised as :class:`~tempo_agents.errors.StoreUnavailableError`. Meanwhile one
task per event loop probes the server with a connection of its own every :data:`PROBE_SECONDS`, and every waiting
operation goes on as soon as a probe gets through: the pool's own reconnect backoff (which grows to half a minute)
is cut short (``reconnect_timeout``), so a long outage costs no extra wait once the database is back. A write is
retried in place only if it cannot have committed, or if repeating it is harmless (``idempotent``). An operation
waits up to ``pool_timeout`` for a free pooled connection; when none came although the database answers and the
pool is at ``max_size``, it fails with :class:`~tempo_agents.errors.StoreBusyError`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool

from tempo_agents.errors import ConfigurationError
from tempo_agents.store import pool_size as sizing
from tempo_agents.store.outages import STORE_OUTAGES
from tempo_agents.store.patience import store_patience
from tempo_agents.store.postgres.failures import Attempt, busy_error, one_line, pool_is_full, unavailable_error
from tempo_agents.store.postgres.schema import migrate_schema
from tempo_agents.store.redaction import redact
from tempo_agents.store.sealed_columns import SealedColumns

__all__ = ["PROBE_SECONDS", "Conn", "Cursor", "PostgresConnections"]

_T = TypeVar("_T")
Conn = psycopg.AsyncConnection[Any]
"""A connection of the store: autocommit, so each operation opens the transactions it needs."""
Cursor = psycopg.AsyncCursor[Any]
"""A cursor of one of its connections: a statement sent, its answer read when needed (in a pipeline, later)."""

_log = logging.getLogger("tempo_agents.store.postgres")

PROBE_SECONDS = 0.25
"""While the database cannot be reached, how often a probe tries to connect."""
_RECONNECT_TIMEOUT = 1.0
"""How long the pool retries a connection on its own before leaving it to the next operation that needs one."""
_CHECK_SECONDS = 2.0
"""How long :meth:`PostgresConnections.check` waits for a pooled connection before it connects on its own."""
_RETRY_PAUSE_CAP = 0.5
"""The longest pause between two tries of one operation (they start at 0.05 s and double)."""


class PostgresConnections:
    """The connections of one PostgreSQL store (module docstring): its pool, its retries and its probe.

    ``max_size`` and ``pool_timeout`` default to the URL's ``pool_size`` and ``pool_timeout`` parameters, then
    ``$TEMPO_AGENTS_STORE_POOL_SIZE``, then 10 and 30 s.
    """

    def __init__(
        self,
        url: str,
        *,
        min_size: int,
        max_size: int | None,
        retry_seconds: float,
        connect_timeout: float,
        pool_timeout: float | None,
        columns: SealedColumns | None = None,
    ) -> None:
        self.display_url = redact(url)
        self.columns = columns or SealedColumns()
        """How the store's columns that hold user content are sealed."""
        conninfo, ours = sizing.split_url(url)
        try:
            conninfo_to_dict(conninfo)
        except psycopg.ProgrammingError as error:
            raise ConfigurationError(f"invalid PostgreSQL store URL {self.display_url}: {one_line(error)}") from None
        self.conninfo = conninfo
        """The URL without this package's own parameters, as psycopg takes it."""
        self.max_size = max_size if max_size is not None else sizing.pool_size(ours.get("pool_size"), self.display_url)
        self.min_size = min(min_size, self.max_size)
        self.pool_timeout = (
            pool_timeout
            if pool_timeout is not None
            else sizing.pool_timeout(ours.get("pool_timeout"), self.display_url)
        )
        self.retry_seconds = retry_seconds
        self.connect_timeout = connect_timeout
        self._pool: AsyncConnectionPool[Conn] | None = None
        self._pool_loop: asyncio.AbstractEventLoop | None = None
        self._opening: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self._probe: asyncio.Task[None] | None = None
        self._asking: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self._answered_at = -1e9
        self._probe_error = ""
        self.closed = False

    def _connect_timeout(self) -> int:
        return max(1, round(self.connect_timeout))

    async def _connect(self) -> Conn:
        """One connection of its own (schema changes), retried like any operation."""
        started = time.monotonic()
        patience = store_patience(self.retry_seconds)
        delay = 0.05
        while True:
            try:
                return await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True, connect_timeout=self._connect_timeout()
                )
            except psycopg.OperationalError as error:
                waited = time.monotonic() - started
                if waited + delay > patience or self.closed:
                    raise unavailable_error(self.display_url, error, waited) from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RETRY_PAUSE_CAP)

    async def ready_pool(self) -> AsyncConnectionPool[Conn]:
        """The pool of the running event loop, opened (after :meth:`migrate`) on first use."""
        if self.closed:
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
            pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
                self.conninfo,
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

    async def run(self, op: Callable[[Conn, Attempt], Awaitable[_T]], *, idempotent: bool = True) -> _T:
        """Run ``op`` on a pooled connection, waiting out a database that cannot be reached (module docstring)."""
        pool = await self.ready_pool()
        started = time.monotonic()
        deadline = started + store_patience(self.retry_seconds)
        delay = 0.05
        while True:
            attempt = Attempt()
            wait = self.pool_timeout
            try:
                if self._probe is not None and not self._probe.done():  # known to be down: no use queueing
                    await self._reachable_by(deadline, started)
                wait = min(self.pool_timeout, max(0.1, deadline - time.monotonic()))
                async with pool.connection(timeout=wait) as conn:
                    return await op(conn, attempt)
            except psycopg.OperationalError as error:
                waited = time.monotonic() - started
                if (attempt.committing and not idempotent) or self.closed:
                    raise unavailable_error(self.display_url, error, waited) from None
                full = pool_is_full(error, pool, self.max_size)
                if full and await self._answers_lately():
                    raise busy_error(self.display_url, pool, self.max_size, wait) from None
                _log.debug("store %s: retrying after %s", self.display_url, one_line(error))
                if time.monotonic() + delay > deadline:
                    raise unavailable_error(self.display_url, error, waited) from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RETRY_PAUSE_CAP)
                self._probe_error = one_line(error)
                await self._reachable_by(deadline, started)

    async def check(self) -> None:
        """Raise :class:`~tempo_agents.errors.StoreUnavailableError` unless the database answers now."""
        if self.closed:
            raise RuntimeError(f"the store {self.display_url} is closed")
        if self._probe is not None and not self._probe.done():  # an outage is being waited out
            raise unavailable_error(self.display_url, self._probe_error or "no answer", 0)
        pool = self._pool
        if pool is None or self._pool_loop is not asyncio.get_running_loop():
            if not await self._answers():
                raise unavailable_error(self.display_url, self._probe_error, 0)
            return
        try:
            async with pool.connection(timeout=_CHECK_SECONDS) as conn:
                await conn.execute("SELECT 1")
        except psycopg.OperationalError as error:  # a connection of before an outage, or a busy pool
            if not await self._answers():
                raise unavailable_error(self.display_url, self._probe_error or one_line(error), 0) from None

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
                self.conninfo, autocommit=True, connect_timeout=self._connect_timeout()
            )
        except psycopg.OperationalError as error:
            self._probe_error = one_line(error)
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
            raise unavailable_error(
                self.display_url, self._probe_error or "no answer", time.monotonic() - started
            ) from None

    async def _probe_until_reachable(self) -> None:
        outage: int | None = None
        try:
            while not self.closed:
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
        """Create or upgrade the schema over a connection of its own; says what was done."""
        conn = await self._connect()
        try:
            before, after = await migrate_schema(conn)
        finally:
            await conn.close()
        if before == after:
            return f"{self.display_url}: schema version {after}, up to date"
        return f"{self.display_url}: schema upgraded from version {before} to {after}"

    def stop(self) -> bool:
        """Refuse new operations and stop the probe; False if this was done before."""
        if self.closed:
            return False
        self.closed = True
        probe, self._probe = self._probe, None
        if probe is not None and not probe.done() and probe.get_loop() is asyncio.get_running_loop():
            probe.cancel()
        return True

    async def close_pool(self) -> None:
        """Close the pool, if the running event loop opened it (a pool of another loop is dropped with it)."""
        pool, self._pool = self._pool, None
        if pool is not None and self._pool_loop is asyncio.get_running_loop():
            await pool.close()
