"""The Store interface: run journals, run transcripts, memory threads and thread state."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JournalEntry:
    """One chunk of a run journal at its offset. ``chunk`` is the wire (camelCase) form."""

    offset: int
    chunk: dict[str, Any]


@dataclass(frozen=True)
class ChunkWrite:
    """A chunk to append. A chunk with a ``key`` is durable: writing the same key again replaces
    the chunk in place (same offset) instead of appending a duplicate."""

    chunk: dict[str, Any]
    key: str | None = None


@dataclass(frozen=True)
class SavedOutcome:
    """What an activity returned, saved in the transaction of its last write: a retry of the activity
    (its worker died before Temporal heard of the result) answers from here instead of running again."""

    key: str
    value: dict[str, Any]


INPUT_STEP = -1
"""Transcript step of the messages a run was started with."""
HISTORY_STEP = -2
"""Transcript step of the memory-thread messages of earlier runs."""


@dataclass(frozen=True)
class TranscriptEntry:
    """One message of a run transcript, addressed by ``(step, part)``; ``position`` orders a step."""

    step: int
    part: str
    position: int
    message: dict[str, Any]
    memory_message: dict[str, Any] | None = None
    """The form kept in memory for later runs, when a transcript projection changed it."""


class Store(ABC):
    """Where runs keep everything that must not live in Temporal history.

    Writes are idempotent where an activity retry could repeat them: durable journal chunks by
    key, transcript entries by ``(run_id, step, part)``, thread messages by ``(run_id, index)``.
    """

    url: str

    async def append_chunks(self, run_id: str, writes: Sequence[ChunkWrite]) -> list[int]:
        """Append chunks to a run's journal in order; returns the offset each one holds."""
        if not writes:
            return []
        return await self.record(run_id, (), writes)

    @abstractmethod
    async def read_chunks(self, run_id: str, offset: int = 0, limit: int = 1000) -> list[JournalEntry]:
        """Chunks from ``offset`` on, in offset order, at most ``limit``."""

    @abstractmethod
    async def offset_of(self, run_id: str, key: str) -> int | None:
        """The offset of the durable chunk written with ``key``, or ``None``."""

    @abstractmethod
    async def wait_for_chunks(self, run_id: str, offset: int, timeout: float) -> None:
        """Return once a chunk at ``offset`` or later may exist, or after ``timeout`` seconds."""

    @abstractmethod
    async def put_transcript(self, run_id: str, entries: Sequence[TranscriptEntry]) -> None:
        """Insert or replace transcript entries."""

    @abstractmethod
    async def record(
        self,
        run_id: str,
        entries: Sequence[TranscriptEntry],
        writes: Sequence[ChunkWrite],
        outcome: SavedOutcome | None = None,
    ) -> list[int]:
        """Store transcript entries, append chunks and save an outcome in one transaction (a result and
        its chunk together)."""

    @abstractmethod
    async def saved_outcome(self, run_id: str, key: str) -> dict[str, Any] | None:
        """The outcome saved under ``key`` by :meth:`record`, or ``None``."""

    async def saved_or_counted(self, run_id: str, key: str, counter_key: str) -> tuple[dict[str, Any] | None, int]:
        """The outcome saved under ``key`` and 0 if there is one; else ``None`` and the count kept under
        ``counter_key`` (``{"starts": n}``), raised by one and saved first. Stores do it in one transaction;
        this composition of the other methods is for stores that do not."""
        saved = await self.saved_outcome(run_id, key)
        if saved is not None:
            return saved, 0
        counted = await self.saved_outcome(run_id, counter_key)
        count = 1 + (int(counted["starts"]) if counted is not None else 0)
        await self.record(run_id, [], [], SavedOutcome(counter_key, {"starts": count}))
        return None, count

    @abstractmethod
    async def get_transcript(self, run_id: str) -> list[TranscriptEntry]:
        """The whole transcript of a run, ordered by step then position."""

    @abstractmethod
    async def transcript_changes(self, run_id: str, after_revision: int) -> tuple[list[TranscriptEntry], int]:
        """Transcript entries inserted or replaced after ``after_revision`` (0: all), and the run's
        current revision. Every write of a run's transcript raises its revision."""

    @abstractmethod
    async def append_thread_messages(
        self, thread_id: str, resource_id: str, run_id: str, messages: Sequence[dict[str, Any]]
    ) -> None:
        """Record the messages a run added to a memory thread (idempotent per run)."""

    @abstractmethod
    async def get_thread_messages(self, thread_id: str, resource_id: str) -> list[dict[str, Any]]:
        """Every message of a memory thread, oldest first."""

    @abstractmethod
    async def get_thread_state(self, thread_id: str, state_type: str) -> Any | None:
        """The value stored for ``(thread_id, state_type)``, or ``None``."""

    @abstractmethod
    async def set_thread_state(self, thread_id: str, state_type: str, value: Any) -> None:
        """Store a value for ``(thread_id, state_type)``, replacing any earlier one."""

    async def check(self) -> None:
        """Return if the store answers now; raise :class:`~tempo_agents.errors.StoreUnavailableError` soon if it
        does not (readiness probes). This default reads one offset."""
        await self.offset_of("", "")

    @abstractmethod
    async def migrate(self) -> str:
        """Create or upgrade the store's tables now (every store also does it on first use); returns a line
        saying what it did, for ``tempo-agents store migrate``."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections and threads."""


def to_json(value: Any) -> str:
    """How both stores write a JSON column: compact, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def transcript_rows(run_id: str, entries: Sequence[TranscriptEntry], revision: int) -> list[tuple[Any, ...]]:
    """The transcript table's rows for ``entries``, all under ``revision`` (column order of both stores' upsert)."""
    return [
        (
            run_id,
            e.step,
            e.part,
            e.position,
            to_json(e.message),
            None if e.memory_message is None else to_json(e.memory_message),
            revision,
        )
        for e in entries
    ]
