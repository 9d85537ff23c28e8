""":class:`SQLiteStore`: the :class:`~tempo_agents.store.base.Store` interface over the SQLite store's parts.

Its connections (:mod:`~tempo_agents.store.sqlite.connections`) run every operation on a writer or a reader thread;
the journal's writes and reads, the waiting calls and the memory threads are functions of their own modules; the
:class:`~tempo_agents.store.sqlite.watcher.Watcher` wakes the readers that tail a journal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tempo_agents.audit import AuditAction, AuditEntry, AuditQuery, AuditRecord
from tempo_agents.store import base
from tempo_agents.store.base import ChunkWrite, JournalEntry, Resources, SavedOutcome, Store, TranscriptEntry
from tempo_agents.store.key_rotation import RotatedTable, rotate_keys
from tempo_agents.store.sealed_columns import SealedColumns, StoreKeys
from tempo_agents.store.sqlite import (
    audit_trail,
    erasure,
    journal_reads,
    journal_writes,
    key_rotation,
    run_expiries,
    threads,
    waiting_calls,
)
from tempo_agents.store.sqlite.connections import SQLiteConnections
from tempo_agents.store.sqlite.watcher import Watcher

__all__ = ["SQLiteStore"]


class SQLiteStore(Store):
    """A :class:`Store` in one SQLite file.

    All SQL runs on one private thread so the event loop never blocks on disk. Readers in the same
    process are woken as soon as a chunk is appended; chunks appended by other processes are noticed by a
    watcher thread that, while a reader waits, checks the file every ``poll_interval`` seconds
    (:mod:`~tempo_agents.store.sqlite.watcher`). With a ``keyring``, the columns that hold user content are sealed
    (:mod:`~tempo_agents.store.sealed_columns`).
    """

    def __init__(self, path: str | Path, *, poll_interval: float = 0.005, keyring: StoreKeys | None = None) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = SQLiteConnections(self.path, SealedColumns(keyring))
        self._watcher = Watcher(self.path, poll_interval)
        self._db.after_write = self._watcher.after_own_writes

    @property
    def poll_interval(self) -> float:
        """How often the watcher checks the file for other processes' commits while a reader waits."""
        return self._watcher.poll_interval

    async def record(
        self,
        run_id: str,
        entries: Sequence[TranscriptEntry],
        writes: Sequence[ChunkWrite],
        outcome: SavedOutcome | None = None,
        waiting: base.WaitingChange | None = None,
        charges: Sequence[base.UsageCharge] = (),
        fence: base.StartFence | None = None,
        audit: Sequence[AuditEntry] = (),
    ) -> list[int]:
        offsets = await journal_writes.record(
            self._db, run_id, entries, writes, outcome, waiting, charges, fence, audit
        )
        if offsets:
            self._watcher.notify(run_id, max(offsets))
        return offsets

    async def read_chunks(self, run_id: str, offset: int = 0, limit: int = 1000) -> list[JournalEntry]:
        if self._watcher.closed:  # a tail's read needs no thread switch: it must not go on while close() waits
            raise RuntimeError(f"{self.url}: the store is closed")
        self._watcher.written.reading(run_id)
        return await journal_reads.read_chunks(self._db, run_id, offset, limit)

    async def offset_of(self, run_id: str, key: str) -> int | None:
        return await journal_reads.offset_of(self._db, run_id, key)

    async def wait_for_chunks(self, run_id: str, offset: int, timeout: float) -> None:
        if self._watcher.closed:
            return
        await self._db.ready()  # the writer creates the journal table the watcher reads
        await self._watcher.wait(run_id, offset, timeout)

    async def append_audit(self, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
        return await audit_trail.append_audit(self._db, entries)

    async def audit_actions(self, query: AuditQuery) -> list[AuditAction]:
        return await audit_trail.audit_actions(self._db, query)

    async def audit_chain(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]:
        return await audit_trail.audit_chain(self._db, after, limit)

    async def usage_counters(self, counters: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, int]]:
        return await journal_reads.usage_counters(self._db, counters)

    async def saved_outcome(self, run_id: str, key: str) -> dict[str, Any] | None:
        return await journal_reads.saved_outcome(self._db, run_id, key)

    async def forget_outcomes_before(self, run_id: str, key: str) -> None:
        await journal_writes.forget_outcomes_before(self._db, run_id, key)

    async def saved_or_counted(self, run_id: str, key: str, counter_key: str) -> tuple[dict[str, Any] | None, int]:
        return await journal_writes.saved_or_counted(self._db, run_id, key, counter_key)

    async def put_transcript(self, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
        await journal_writes.put_transcript(self._db, run_id, entries)

    async def transcript_changes(self, run_id: str, after_revision: int) -> tuple[list[TranscriptEntry], int]:
        return await journal_reads.transcript_changes(self._db, run_id, after_revision)

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

    async def waiting_runs(
        self,
        task_queue: str,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: Resources = None,
        limit: int | None = None,
        skip: int = 0,
    ) -> base.WaitingRuns:
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
        self, run_id: str, tool_call_id: str, round: int, answer: base.GivenAnswer | None = None
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
    ) -> base.AnsweredCalls:
        return await waiting_calls.answered_calls(
            self._db, task_queue, agent_id=agent_id, resource_id=resource_id, limit=limit, skip=skip
        )

    async def waiting_kept_since(self) -> float:
        return await waiting_calls.waiting_kept_since(self._db)

    async def rotate_keys(
        self, batch_size: int = 500, progress: Callable[[RotatedTable], None] | None = None
    ) -> list[RotatedTable]:
        return await rotate_keys(self._db.columns, key_rotation.SQLiteRotation(self._db), batch_size, progress)

    async def migrate(self) -> str:
        await self._db.run(lambda db: None)  # opening the file creates or upgrades its tables
        return f"{self.url}: schema up to date"

    async def close(self) -> None:
        if self._watcher.closed:  # closed before (or closing): its threads are ended or ending
            return
        watcher = self._watcher.stop()  # readers still waiting return at their timeout
        if watcher is not None:
            await self._db.after_reads(watcher.join)
        await self._db.close()
        self._watcher.close()
