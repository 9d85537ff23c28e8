"""The Store interface: run journals, run transcripts, memory threads and thread state."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tempo_agents.audit import AuditAction, AuditEntry, AuditQuery, AuditRecord
from tempo_agents.errors import SupersededStartError

__all__ = [
    "ANSWERED_COLUMNS",
    "ANSWERED_ORDER",
    "CHILD_RUN_CHUNK",
    "HISTORY_STEP",
    "INPUT_STEP",
    "START_COUNT_SUFFIX",
    "WAITING_COLUMNS",
    "WAITING_ORDER",
    "AnsweredCall",
    "AnsweredCalls",
    "ChunkWrite",
    "GivenAnswer",
    "JournalEntry",
    "ReaddressedCall",
    "Resources",
    "SavedOutcome",
    "StartFence",
    "Store",
    "TranscriptEntry",
    "UsageCharge",
    "WaitingCall",
    "WaitingChange",
    "WaitingRuns",
    "answered_call",
    "child_runs_in",
    "ends_run",
    "first_runs",
    "group_waiting",
    "to_json",
    "transcript_rows",
    "waiting_filter",
    "waiting_row",
]


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


START_COUNT_SUFFIX = ":starts"
"""The end of the key of a local activity's count of starts (a saved outcome beside the one it counts for)."""


@dataclass(frozen=True)
class StartFence:
    """The writes of one start of a local activity: refused (``SupersededStartError``) once a later start of the
    same call has been counted under ``counter_key`` (``Store.saved_or_counted``), so a start whose workflow task
    timed out while it still ran cannot write into the journal beside the start that replaced it."""

    counter_key: str
    start: int

    def check(self, run_id: str, counted: dict[str, Any] | None) -> None:
        """Raise ``SupersededStartError`` when ``counted`` (the count saved under ``counter_key``) names a later
        start than this one."""
        newest = 0 if counted is None else int(counted["starts"])
        if newest > self.start:
            raise SupersededStartError(
                f"Start {self.start} of {self.counter_key.removesuffix(START_COUNT_SUFFIX)} of run {run_id} "
                f"was superseded by start {newest}: its writes are refused."
            )


@dataclass(frozen=True)
class WaitingCall:
    """A call that waits for a person, as the store lists it: written in the transaction that journals its
    ``tool-call-suspended`` / ``tool-call-approval`` chunk, removed in the one that records its answer (or the
    end of its run), so a listing made after the chunk was read always holds it."""

    run_id: str
    tool_call_id: str
    task_queue: str
    agent_id: str
    thread_id: str | None
    resource_id: str | None
    call: dict[str, Any]
    """The call as the run's ``pending`` query shows it (the wire form of ``PendingCall``)."""
    suspended_at: float
    """Seconds since the epoch."""


@dataclass(frozen=True)
class ReaddressedCall:
    """A waiting call re-addressed to other ``approvers`` (an escalation), in the round it waits in."""

    tool_call_id: str
    round: int
    approvers: Sequence[str]
    escalated: bool = True

    def body_patch(self) -> dict[str, Any]:
        """The fields of the stored call (its ``PendingCall`` wire form) that change."""
        return {"approvers": list(self.approvers), "escalated": self.escalated}


@dataclass(frozen=True)
class WaitingChange:
    """What a write changes in the calls its run waits on: ``waits`` start waiting (or wait again), the calls
    named in ``answered`` no longer do, and the calls in ``readdressed`` get new approvers if they still wait in
    that round (nothing is listed for a call that no longer waits; when, where and in which thread it waits is
    kept)."""

    waits: Sequence[WaitingCall] = ()
    answered: Sequence[str] = ()
    readdressed: Sequence[ReaddressedCall] = ()


@dataclass(frozen=True)
class WaitingRuns:
    """A page of runs that wait for a person (newest suspension first), each with its waiting calls, and how
    many such runs there are in all."""

    runs: list[list[WaitingCall]]
    total: int


@dataclass(frozen=True)
class GivenAnswer:
    """An accepted answer to a waiting call, handed to :meth:`Store.forget_waiting` to be kept."""

    answered_at: float
    """Seconds since the epoch."""
    answer: dict[str, Any]
    """The answer's wire form (the run's ``answers`` query's: who, what, when)."""


@dataclass(frozen=True)
class AnsweredCall:
    """A kept answer, with where its call waited (copied from the waiting call it ended)."""

    run_id: str
    tool_call_id: str
    task_queue: str
    agent_id: str
    thread_id: str | None
    resource_id: str | None
    answered_at: float
    answer: dict[str, Any]


@dataclass(frozen=True)
class AnsweredCalls:
    """A page of kept answers, newest first, and how many there are in all."""

    answers: list[AnsweredCall]
    total: int


ANSWERED_COLUMNS = "run_id, tool_call_id, round, task_queue, agent_id, thread_id, resource_id, answered_at, body"
"""The columns of both stores' ``answered_calls`` table that :func:`answered_call` reads, in its order."""

ANSWERED_ORDER = "ORDER BY answered_at DESC, run_id, tool_call_id, round DESC"
"""Newest answer first (the index on ``(task_queue, answered_at)`` gives it), ties in a fixed order."""


def answered_call(row: Sequence[Any]) -> AnsweredCall:
    """A row of :data:`ANSWERED_COLUMNS` as an :class:`AnsweredCall`."""
    run_id, tool_call_id, _, task_queue, agent_id, thread_id, resource_id, answered_at, body = row
    return AnsweredCall(
        run_id=run_id,
        tool_call_id=tool_call_id,
        task_queue=task_queue,
        agent_id=agent_id,
        thread_id=thread_id,
        resource_id=resource_id,
        answered_at=float(answered_at),
        answer=json.loads(body),
    )


CHILD_RUN_CHUNK = "data-child-run"
"""The chunk that links a call to the child run it started (``data.childRunId``): the store keeps the link, so
that listings of waiting runs can leave sub-agents' runs out (their calls wait on their top run)."""


def ends_run(writes: Sequence[ChunkWrite]) -> bool:
    """Whether the writes end their run (a ``finish`` that is not a suspension): nothing of it waits any more."""
    for write in writes:
        chunk = write.chunk
        if chunk.get("type") == "finish":
            result = (chunk.get("payload") or {}).get("stepResult") or {}
            if result.get("reason") != "suspended":
                return True
    return False


def child_runs_in(writes: Sequence[ChunkWrite]) -> list[str]:
    """The child runs the writes link to."""
    found = []
    for write in writes:
        chunk = write.chunk
        if chunk.get("type") == CHILD_RUN_CHUNK:
            child = (chunk.get("data") or {}).get("childRunId")
            if isinstance(child, str):
                found.append(child)
    return found


WAITING_COLUMNS = "run_id, tool_call_id, round, task_queue, agent_id, thread_id, resource_id, suspended_at, body"
"""The columns of both stores' ``waiting_calls`` table, in the order of :func:`waiting_row`."""


def waiting_row(call: WaitingCall) -> tuple[Any, ...]:
    """A waiting call as a row of :data:`WAITING_COLUMNS`."""
    return (
        call.run_id,
        call.tool_call_id,
        int(call.call.get("round", 0)),
        call.task_queue,
        call.agent_id,
        call.thread_id,
        call.resource_id,
        call.suspended_at,
        to_json(call.call),
    )


Resources = str | frozenset[str] | None
"""Which resources a listing keeps: one, any of a set (an empty set: none), or all (``None``)."""


def waiting_filter(
    mark: str, task_queue: str, agent_id: str | None, thread_id: str | None, resource_id: Resources
) -> tuple[list[str], list[Any]]:
    """The ``WHERE`` clauses (parameters written ``mark``) and values that pick waiting calls."""
    clauses, values = [f"task_queue = {mark}"], [task_queue]
    for column, value in (("agent_id", agent_id), ("thread_id", thread_id)):
        if value is not None:
            clauses.append(f"{column} = {mark}")
            values.append(value)
    if isinstance(resource_id, str):
        clauses.append(f"resource_id = {mark}")
        values.append(resource_id)
    elif resource_id is not None:
        kept = sorted(resource_id)
        clauses.append(f"resource_id IN ({', '.join([mark] * len(kept))})" if kept else "1 = 0")
        values.extend(kept)
    return clauses, values


WAITING_ORDER = "ORDER BY suspended_at DESC, run_id"
"""The order the stores read waiting calls in for a page: the index on ``(task_queue, suspended_at)`` gives it
without sorting every waiting call, and a run's first call in it is its newest, so the runs come newest suspension
first (ties by run id) as their calls are read: a page reads the calls of the runs up to its end, not every run's."""


def first_runs(run_ids: Iterable[str], wanted: int | None) -> list[str]:
    """The distinct run ids of ``run_ids`` in the order first seen, at most ``wanted`` (``None``: all)."""
    found: dict[str, None] = {}
    for run_id in run_ids:
        if wanted is not None and len(found) >= wanted:
            break
        found.setdefault(run_id, None)
    return list(found)


def group_waiting(run_ids: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[list[WaitingCall]]:
    """Rows of :data:`WAITING_COLUMNS` grouped by run, in the order of ``run_ids``."""
    by_run: dict[str, list[WaitingCall]] = {run_id: [] for run_id in run_ids}
    for run_id, tool_call_id, _, task_queue, agent_id, thread_id, resource_id, suspended_at, body in rows:
        by_run[run_id].append(
            WaitingCall(
                run_id=run_id,
                tool_call_id=tool_call_id,
                task_queue=task_queue,
                agent_id=agent_id,
                thread_id=thread_id,
                resource_id=resource_id,
                call=json.loads(body),
                suspended_at=float(suspended_at),
            )
        )
    return [calls for calls in by_run.values() if calls]


@dataclass(frozen=True)
class UsageCharge:
    """Tokens and cost (billionths of a US dollar) added to one usage counter, named by a scope key
    (``run:<id>``, ``resource:<id>`` ...) and a period key (``total``, ``day:2026-12-02`` ...)."""

    scope: str
    period: str
    tokens: int
    cost_nanos: int


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
    Every write under a run id (:meth:`record`, :meth:`put_transcript`, :meth:`append_thread_messages`,
    :meth:`saved_or_counted`, :meth:`set_thread_state` with its ``run_id``) is refused with ``ErasedRunError``,
    writing nothing, once the run was erased on request (:meth:`erase`).
    """

    url: str

    async def append_chunks(
        self, run_id: str, writes: Sequence[ChunkWrite], fence: StartFence | None = None
    ) -> list[int]:
        """Append chunks to a run's journal in order; returns the offset each one holds. With a ``fence``, as
        :meth:`record`."""
        if not writes:
            return []
        return await self.record(run_id, (), writes, fence=fence)

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
        waiting: WaitingChange | None = None,
        charges: Sequence[UsageCharge] = (),
        fence: StartFence | None = None,
        audit: Sequence[AuditEntry] = (),
    ) -> list[int]:
        """Store transcript entries, append chunks, save an outcome, change the run's waiting calls, add to
        usage counters and append to the audit trail (:meth:`append_audit`) in one transaction (a result and its
        chunk together; a model step's usage with its saved outcome, so a retried step answers from the outcome and
        is counted once; a change and its audit record). Writes that end the run
        (:func:`ends_run`) also remove every call it waited on; a child-run link (:data:`CHILD_RUN_CHUNK`) is
        kept. With a ``fence``, the transaction first reads the fence's start count (ordered with the count's own
        transaction) and writes nothing, raising ``SupersededStartError``, when a later start was counted."""

    @abstractmethod
    async def append_audit(self, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
        """Append ``entries`` to the store's audit chain, in order, in one transaction that holds the chain's head
        (appends from every process take turns); returns them as records (their place and hashes)."""

    @abstractmethod
    async def audit_actions(self, query: AuditQuery) -> list[AuditAction]:
        """The actions ``query`` selects, newest first: each first record with the record that completed it."""

    @abstractmethod
    async def audit_chain(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]:
        """The audit chain's records after ``seq`` ``after``, in order, at most ``limit`` (verification, export)."""

    @abstractmethod
    async def usage_counters(self, counters: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, int]]:
        """The tokens and cost (billionths of a US dollar) counted so far under each ``(scope, period)`` that
        has a count; counters never added to are left out."""

    @abstractmethod
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
        """Runs of ``task_queue`` that wait for a person, but not child runs, newest suspension first: ``skip``
        runs left out, at most ``limit`` (``None``: all) listed, and ``total`` of them in all."""

    @abstractmethod
    async def forget_waiting(
        self, run_id: str, tool_call_id: str, round: int, answer: GivenAnswer | None = None
    ) -> None:
        """The call no longer waits in ``round`` (its answer was accepted); a later round's wait is kept. With
        ``answer``, the answer is kept in the same transaction, with where the call waited (the first one given
        for a call's round is kept; nothing is kept for a call that no longer waits)."""

    @abstractmethod
    async def answered_calls(
        self,
        task_queue: str,
        *,
        agent_id: str | None = None,
        resource_id: Resources = None,
        limit: int | None = None,
        skip: int = 0,
    ) -> AnsweredCalls:
        """Answers kept for calls of ``task_queue``'s runs (not child runs: their top run's call is answered),
        newest first: ``skip`` left out, at most ``limit`` (``None``: all), and ``total`` in all; ``resource_id``
        keeps those of runs of its resources."""

    @abstractmethod
    async def waiting_kept_since(self) -> float:
        """Since when (seconds since the epoch) this store keeps waiting calls: a run that suspended before
        was never recorded here, and is found through Temporal visibility instead."""

    @abstractmethod
    async def saved_outcome(self, run_id: str, key: str) -> dict[str, Any] | None:
        """The outcome saved under ``key`` by :meth:`record`, or ``None``."""

    @abstractmethod
    async def forget_outcomes_before(self, run_id: str, key: str) -> None:
        """Delete the outcomes saved for ``run_id`` under keys that sort before ``key`` (byte order), e.g. the
        replay guard's requests counted under keys that start with their time."""

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

    async def get_transcript(self, run_id: str) -> list[TranscriptEntry]:
        """The whole transcript of a run, ordered by step then position."""
        entries, _ = await self.transcript_changes(run_id, 0)
        return entries

    @abstractmethod
    async def transcript_changes(self, run_id: str, after_revision: int) -> tuple[list[TranscriptEntry], int]:
        """Transcript entries inserted or replaced after ``after_revision`` (0: all), and the run's
        current revision. Every write of a run's transcript raises its revision."""

    @abstractmethod
    async def append_thread_messages(
        self, thread_id: str, resource_id: str, run_id: str, messages: Sequence[dict[str, Any]]
    ) -> None:
        """Record the messages a run added to a memory thread (idempotent per run): ``messages`` are all of the
        run's so far, each at its index. A message already recorded keeps its place (its body may change: a waiting
        call's result replaces its marker); new ones go after the run's earlier ones, or at the end of the thread
        when other runs' messages were recorded since (a run that yielded its thread while it waited goes on after
        what was said meanwhile)."""

    @abstractmethod
    async def set_expiries(self, expiries: Sequence[tuple[str, float]]) -> None:
        """Record when closed runs' records expire: ``(run id, seconds since the epoch)``, replacing an earlier
        expiry of the same run."""

    @abstractmethod
    async def expired_runs(self, now: float, limit: int) -> list[str]:
        """Up to ``limit`` runs whose records expired at ``now`` or before, the earliest first."""

    @abstractmethod
    async def forget_expiries(self, run_ids: Sequence[str]) -> None:
        """Drop the expiries of runs whose records are gone."""

    @abstractmethod
    async def retention_mark(self, task_queue: str) -> float | None:
        """Up to when (seconds since the epoch) the retention sweeper has read the closed runs of ``task_queue``."""

    @abstractmethod
    async def set_retention_mark(self, task_queue: str, mark: float) -> None:
        """Record how far the retention sweeper has read the closed runs of ``task_queue``."""

    @abstractmethod
    async def erase(
        self,
        run_ids: Sequence[str],
        threads: Sequence[tuple[str, str]] = (),
        resources: Sequence[str] = (),
        *,
        refuse_later_writes: bool = True,
    ) -> int:
        """Delete everything the store holds of ``run_ids`` (journal, transcript, outcomes, waiting and answered
        calls, thread messages), of ``threads`` (thread id, resource id: their messages and state) and of
        ``resources`` (every thread of theirs, every waiting or answered call), so that none of it can be read back;
        how many rows went. Erasing what is already gone deletes nothing.

        With ``refuse_later_writes`` (an erasure on request), the store keeps the ids of ``run_ids`` (the ids alone)
        and from then on refuses every write under them with ``ErasedRunError``: an activity of an erased run that
        was still working when the run was stopped cannot bring back what was deleted, however late it finishes. A
        write in flight when the erasure begins commits before it and is deleted by it. (The retention sweeper,
        which deletes closed runs only, does not need this.)"""

    @abstractmethod
    async def is_erased(self, run_id: str) -> bool:
        """Whether ``run_id`` was erased on request (:meth:`erase` with ``refuse_later_writes``): nothing more is
        written under it, and no new run may take its id."""

    @abstractmethod
    async def remove_run_from_thread(self, thread_id: str, resource_id: str, run_id: str) -> int:
        """Remove the messages ``run_id`` added to a memory thread (a rolled-back run); how many were removed. The
        thread's other messages keep their order."""

    @abstractmethod
    async def get_thread_messages(self, thread_id: str, resource_id: str) -> list[dict[str, Any]]:
        """Every message of a memory thread, oldest first."""

    @abstractmethod
    async def thread_messages_after(self, thread_id: str, resource_id: str, run_id: str) -> list[dict[str, Any]]:
        """The messages of other runs recorded on the thread after ``run_id``'s last one, oldest first (what was
        said while that run waited); all of the thread's when ``run_id`` recorded none."""

    @abstractmethod
    async def get_thread_state(self, thread_id: str, state_type: str) -> Any | None:
        """The value stored for ``(thread_id, state_type)``, or ``None``."""

    @abstractmethod
    async def set_thread_state(self, thread_id: str, state_type: str, value: Any, *, run_id: str | None = None) -> None:
        """Store a value for ``(thread_id, state_type)``, replacing any earlier one. With the ``run_id`` that writes
        it, refused (``ErasedRunError``) once that run was erased on request, as the run's other writes are."""

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
        """Release connections and threads. Closing a closed store does nothing."""


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
