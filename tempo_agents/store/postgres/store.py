""":class:`PostgresStore`: the :class:`~tempo_agents.store.base.Store` interface over the PostgreSQL store's parts.

Its connections (:mod:`~tempo_agents.store.postgres.connections`) run every operation; the journal's writes and
reads, the waiting calls and the memory threads are functions of their own modules; the store adds the process's
listening connection (:mod:`~tempo_agents.store.postgres.listener`) for readers that tail a journal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from tempo_agents.audit import AuditAction, AuditEntry, AuditQuery, AuditRecord
from tempo_agents.store._waiters import Waiter
from tempo_agents.store.base import (
    AnsweredCalls,
    ChunkWrite,
    GivenAnswer,
    JournalEntry,
    Resources,
    SavedOutcome,
    StartFence,
    Store,
    TranscriptEntry,
    UsageCharge,
    WaitingChange,
    WaitingRuns,
)
from tempo_agents.store.key_rotation import RotatedTable, rotate_keys
from tempo_agents.store.postgres import (
    audit_trail,
    erasure,
    journal_reads,
    journal_writes,
    key_rotation,
    run_expiries,
    threads,
    waiting_calls,
)
from tempo_agents.store.postgres.connections import PostgresConnections
from tempo_agents.store.postgres.listener import Listener
from tempo_agents.store.sealed_columns import SealedColumns, StoreKeys

__all__ = ["PostgresStore"]


class PostgresStore(Store):
    """A :class:`Store` in a PostgreSQL database (package docstring): ``postgresql://user:pw@host:5432/db``.

    Connections come from a psycopg ``AsyncConnectionPool`` opened on first use (``min_size``..``max_size``),
    after one direct connection has created or upgraded the schema. ``max_size`` and ``pool_timeout`` default to
    the URL's ``pool_size`` and ``pool_timeout`` parameters, then ``$TEMPO_AGENTS_STORE_POOL_SIZE``, then 10 and
    30 s. With a ``keyring``, the columns that hold user content are sealed (:mod:`~tempo_agents.store.sealed_columns`).
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
        keyring: StoreKeys | None = None,
    ) -> None:
        self.url = url
        self._db = PostgresConnections(
            url,
            min_size=min_size,
            max_size=max_size,
            retry_seconds=retry_seconds,
            connect_timeout=connect_timeout,
            pool_timeout=pool_timeout,
            columns=SealedColumns(keyring),
        )
        self._chunk_reads = journal_reads.ChunkReads(self._db)
        self._listener: Listener | None = None

    @property
    def display_url(self) -> str:
        """The URL without its password."""
        return self._db.display_url

    @property
    def min_size(self) -> int:
        return self._db.min_size

    @property
    def max_size(self) -> int:
        return self._db.max_size

    @property
    def pool_timeout(self) -> float:
        return self._db.pool_timeout

    @property
    def retry_seconds(self) -> float:
        return self._db.retry_seconds

    @property
    def connect_timeout(self) -> float:
        return self._db.connect_timeout

    # Connections

    async def check(self) -> None:
        await self._db.check()

    async def rotate_keys(
        self, batch_size: int = 500, progress: Callable[[RotatedTable], None] | None = None
    ) -> list[RotatedTable]:
        return await rotate_keys(self._db.columns, key_rotation.PostgresRotation(self._db), batch_size, progress)

    async def migrate(self) -> str:
        return await self._db.migrate()

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
        audit: Sequence[AuditEntry] = (),
    ) -> list[int]:
        if not (entries or writes or outcome or waiting or charges or audit):
            return []
        offsets, last = await journal_writes.record(
            self._db, run_id, entries, writes, outcome, waiting, charges, fence, audit
        )
        if writes and self._listener is not None:
            self._listener.wake_up_to(run_id, last)  # readers in this process need not wait for the NOTIFY
        return offsets

    async def append_audit(self, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
        return await audit_trail.append_audit(self._db, entries)

    async def audit_actions(self, query: AuditQuery) -> list[AuditAction]:
        return await audit_trail.audit_actions(self._db, query)

    async def audit_chain(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]:
        return await audit_trail.audit_chain(self._db, after, limit)

    async def read_chunks(self, run_id: str, offset: int = 0, limit: int = 1000) -> list[JournalEntry]:
        if self._listener is not None:
            self._listener.notified.reading(run_id)
        return await self._chunk_reads.read(run_id, offset, limit)

    async def offset_of(self, run_id: str, key: str) -> int | None:
        return await journal_reads.offset_of(self._db, run_id, key)

    async def wait_for_chunks(self, run_id: str, offset: int, timeout: float) -> None:
        if self._db.closed:
            return
        await self._db.ready_pool()  # the schema exists before anyone listens
        if self._listener is None:
            self._listener = Listener.acquire(self._db.conninfo, self.display_url)
        listener = self._listener
        if not listener.ready.is_set():  # waited for on this loop: an outage with many readers holds no thread
            await listener.until_ready(min(timeout, self.connect_timeout))
        waiter = Waiter.here(offset)
        registered = listener.add(run_id, waiter)
        if registered == "due":
            return
        try:
            # Registered first, then checked: a commit before the check is seen by it, one after is notified.
            if registered == "check" and await journal_reads.latest_offset(self._db, run_id) >= offset:
                return
            await asyncio.wait_for(waiter.future, timeout=timeout)
        except TimeoutError:
            pass
        finally:
            listener.remove(run_id, waiter)

    async def usage_counters(self, counters: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, int]]:
        return await journal_reads.usage_counters(self._db, counters)

    async def saved_outcome(self, run_id: str, key: str) -> dict[str, Any] | None:
        return await journal_reads.saved_outcome(self._db, run_id, key)

    async def forget_outcomes_before(self, run_id: str, key: str) -> None:
        await journal_writes.forget_outcomes_before(self._db, run_id, key)

    async def saved_or_counted(self, run_id: str, key: str, counter_key: str) -> tuple[dict[str, Any] | None, int]:
        return await journal_writes.saved_or_counted(self._db, run_id, key, counter_key)

    # Waiting calls

    async def waiting_runs(
        self,
        task_queue: str,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: Resources = None,
        limit: int | None = None,
        skip: int = 0,
    ) -> WaitingRuns:
        return await waiting_calls.waiting_runs(
            self._db,
            task_queue,
            agent_id=agent_id,
            thread_id=thread_id,
            resource_id=resource_id,
            limit=limit,
            skip=skip,
        )

    async def forget_waiting(
        self, run_id: str, tool_call_id: str, round: int, answer: GivenAnswer | None = None
    ) -> None:
        await waiting_calls.forget_waiting(self._db, run_id, tool_call_id, round, answer)

    async def answered_calls(
        self,
        task_queue: str,
        *,
        agent_id: str | None = None,
        resource_id: Resources = None,
        limit: int | None = None,
        skip: int = 0,
    ) -> AnsweredCalls:
        return await waiting_calls.answered_calls(
            self._db, task_queue, agent_id=agent_id, resource_id=resource_id, limit=limit, skip=skip
        )

    async def waiting_kept_since(self) -> float:
        return await waiting_calls.waiting_kept_since(self._db)

    # Transcripts

    async def put_transcript(self, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
        if entries:
            await self.record(run_id, entries, ())

    async def transcript_changes(self, run_id: str, after_revision: int) -> tuple[list[TranscriptEntry], int]:
        return await journal_reads.transcript_changes(self._db, run_id, after_revision)

    # Memory threads and thread state

    async def append_thread_messages(
        self, thread_id: str, resource_id: str, run_id: str, messages: Sequence[dict[str, Any]]
    ) -> None:
        await threads.append_thread_messages(self._db, thread_id, resource_id, run_id, messages)

    async def set_expiries(self, expiries: Sequence[tuple[str, float]]) -> None:
        await run_expiries.set_expiries(self._db, expiries)

    async def expired_runs(self, now: float, limit: int) -> list[str]:
        return await run_expiries.expired_runs(self._db, now, limit)

    async def forget_expiries(self, run_ids: Sequence[str]) -> None:
        await run_expiries.forget_expiries(self._db, run_ids)

    async def retention_mark(self, task_queue: str) -> float | None:
        return await run_expiries.retention_mark(self._db, task_queue)

    async def set_retention_mark(self, task_queue: str, mark: float) -> None:
        await run_expiries.set_retention_mark(self._db, task_queue, mark)

    async def erase(
        self,
        run_ids: Sequence[str],
        threads: Sequence[tuple[str, str]] = (),
        resources: Sequence[str] = (),
        *,
        refuse_later_writes: bool = True,
    ) -> int:
        return await erasure.erase(self._db, run_ids, threads, resources, refuse_later_writes)

    async def is_erased(self, run_id: str) -> bool:
        return await erasure.is_erased(self._db, run_id)

    async def remove_run_from_thread(self, thread_id: str, resource_id: str, run_id: str) -> int:
        return await threads.remove_run_from_thread(self._db, thread_id, resource_id, run_id)

    async def get_thread_messages(self, thread_id: str, resource_id: str) -> list[dict[str, Any]]:
        return await threads.get_thread_messages(self._db, thread_id, resource_id)

    async def thread_messages_after(self, thread_id: str, resource_id: str, run_id: str) -> list[dict[str, Any]]:
        return await threads.thread_messages_after(self._db, thread_id, resource_id, run_id)

    async def get_thread_state(self, thread_id: str, state_type: str) -> Any | None:
        return await threads.get_thread_state(self._db, thread_id, state_type)

    async def set_thread_state(self, thread_id: str, state_type: str, value: Any, *, run_id: str | None = None) -> None:
        await threads.set_thread_state(self._db, thread_id, state_type, value, run_id)

    async def close(self) -> None:
        if not self._db.stop():  # closed before
            return
        if self._listener is not None:
            self._listener.release()
            self._listener = None
        await self._db.close_pool()
