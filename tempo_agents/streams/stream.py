"""AgentStream: a run's journal, tailed from any offset, with the reference's result accessors."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tempo_agents.errors import StoreUnavailableError
from tempo_agents.journal.chunks import (
    Chunk,
    ErrorChunk,
    FinishChunk,
    StepResetChunk,
    TextDeltaChunk,
    ToolCallApprovalChunk,
    ToolCallChunk,
    ToolCallSuspendedChunk,
    ToolOutputChunk,
    ToolResultChunk,
    chunk_from_wire,
)
from tempo_agents.models.usage import Usage
from tempo_agents.store.base import Store
from tempo_agents.streams.nested_chunks import drop_nested_attempt, is_nested_reset
from tempo_agents.streams.run_tail import OUTAGE_PAUSE_SECONDS, READ_BATCH, ChunkSink, TailFollower, follow_run
from tempo_agents.workflows.thread_payloads import ThreadOutcome

__all__ = [
    "OUTAGE_PAUSE_SECONDS",
    "PROBE_AFTER_IDLE_SECONDS",
    "READ_BATCH",
    "AgentStream",
    "Follow",
    "GenerateResult",
    "RunClosedProbe",
    "collect_result",
    "effective_chunks",
]

Follow = Literal["segment", "run"]
"""How far a stream reads: to the next ``finish`` chunk, or to the end of the run across suspensions."""

RunClosedProbe = Callable[[], Awaitable[str | None]]
"""Returns the run's closing status (``COMPLETED``, ``TERMINATED`` …), or ``None`` while it runs."""

PROBE_AFTER_IDLE_SECONDS = 2.0


@dataclass(frozen=True)
class GenerateResult:
    """A finished run as ``generate()`` returns it."""

    run_id: str
    text: str
    tool_calls: list[ToolCallChunk]
    tool_results: list[ToolResultChunk]
    finish_reason: str
    usage: Usage
    steps: int
    error: str | None
    chunks: list[Chunk] = field(repr=False)
    suspend_payload: dict[str, Any] | None = None
    """For a suspended run: ``{toolCallId, toolName, args, suspendPayload}`` of the call it waits on
    (the last one, when several wait)."""


class AgentStream:
    """The chunks of one run, read from its journal starting at ``offset``.

    ``full_stream`` and ``text_stream`` may be iterated any number of times, concurrently;
    ``text``, ``tool_calls``, ``tool_results``, ``finish_reason`` and ``usage`` are awaitables
    that resolve when the run finishes. A ``step-reset`` chunk (a retried or abandoned model step)
    drops what the failed attempt had streamed from the result (``effective_chunks``);
    ``full_stream`` and ``text_stream`` have already yielded it.
    """

    def __init__(
        self,
        store: Store,
        run_id: str,
        *,
        offset: int = 0,
        probe: RunClosedProbe | None = None,
        follow: Follow = "segment",
        known: Chunk | None = None,
    ) -> None:
        """``known``: the chunk at ``offset``, already in hand (the ``start`` its client just journaled)."""
        self.run_id = run_id
        self.offset = offset
        self.thread_outcome: ThreadOutcome | None = None
        """For a run sent to a memory thread: what its thread did with the message (started, queued, steered...)."""
        self.follow = follow
        self._store = store
        self._probe = probe
        self._chunks: list[Chunk] = [] if known is None else [known]
        self._changed = asyncio.Event()
        self._done = False
        self._reader: asyncio.Task[None] | None = None

    def _ensure_reader(self) -> None:
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        """The reader task behind ``full_stream``: keeps every chunk, so that any number of iterations replay them."""
        try:
            async with contextlib.aclosing(self._batches(self.offset + len(self._chunks))) as batches:
                async for batch in batches:
                    self._chunks += batch
                    self._wake()
        finally:
            self._done = True
            self._wake()

    async def batches(self, sink: ChunkSink | None = None) -> AsyncGenerator[list[Chunk]]:
        """The chunks from ``offset`` to the end of the stream, batch by batch as the run's tail hands them over,
        read in the caller's own task and kept nowhere: for one consumer that sends them on (an SSE response),
        where ``full_stream`` would add a task and a wake-up per batch. Not to be mixed with ``full_stream``.

        ``sink``: offered the live chunks first, on the tail's task (``TailFollower.sink``); what it takes is not
        yielded. It must leave to the batches every chunk that ends the stream (``ends_with``)."""
        if self._chunks:
            yield list(self._chunks)
        async with contextlib.aclosing(self._batches(self.offset + len(self._chunks), sink)) as batches:
            async for batch in batches:
                yield batch

    async def _batches(self, offset: int, sink: ChunkSink | None = None) -> AsyncGenerator[list[Chunk]]:
        """The journal from ``offset`` to the chunk that ends the stream (or to an error chunk, when the run closed
        without one), batch by batch."""
        read_any = bool(self._chunks)
        idle_since = time.monotonic()
        if offset > 0 and not read_any:  # a reconnecting reader: if it is past a closed run's end, say so at once
            idle_since -= PROBE_AFTER_IDLE_SECONDS + 1
        follower = follow_run(self._store, self.run_id, offset)  # the process's one reader of this run
        follower.sink = sink
        sunk = 0
        try:
            while True:
                try:
                    chunks = await follower.take()
                    if chunks:
                        idle_since, read_any = time.monotonic(), True
                        end = self._end_of(chunks)
                        yield chunks[:end]
                        if self.ends_with(chunks[end - 1]):
                            return
                        continue
                    if follower.sunk != sunk:  # the sink took chunks meanwhile: the run is not idle
                        sunk, idle_since, read_any = follower.sunk, time.monotonic(), True
                        continue
                    if self._probe is not None and time.monotonic() - idle_since > PROBE_AFTER_IDLE_SECONDS:
                        idle_since = time.monotonic()
                        ending = await self._closed_without_finish(follower, read_any)
                        if ending is not None:
                            if ending:
                                yield ending
                            return
                except StoreUnavailableError:
                    # The store waited for its database already; the run waits it out too, so its readers do:
                    # they go on from their offset once the database is back, and never end before the run.
                    idle_since = time.monotonic()
                    await asyncio.sleep(OUTAGE_PAUSE_SECONDS)
        finally:
            follower.sink = None
            follower.close()

    def _end_of(self, chunks: list[Chunk]) -> int:
        """How many of the chunks the tail handed over belong to this stream (what follows its end does not)."""
        for index, chunk in enumerate(chunks):
            if self.ends_with(chunk):
                return index + 1
        return len(chunks)

    def ends_with(self, chunk: Chunk) -> bool:
        """Whether ``chunk`` is the last of this stream (a ``finish`` chunk that ends what it follows)."""
        return isinstance(chunk, FinishChunk) and self._ends_stream(chunk)

    async def _closed_without_finish(self, follower: TailFollower, read_any: bool) -> list[Chunk] | None:
        """``None`` while the run has not closed with nothing at the follower's offset; once it has, the error chunk
        that ends the stream, or ``[]`` when this reader started past the run's end. The probe is shared with the
        other streams of the run (``run_closed``)."""
        offset = follower.offset
        assert self._probe is not None
        closed = await follower.run_closed(self._probe)
        if closed is None or await self._store.read_chunks(self.run_id, offset, 1):
            return None
        if not read_any and await self._started_past_the_end():
            return []  # a reader that reconnected after the last chunk: nothing more, no error
        return [
            ErrorChunk.model_validate(
                {"runId": self.run_id, "payload": {"error": f"run ended ({closed}) without a finish chunk"}}
            )
        ]

    async def _started_past_the_end(self) -> bool:
        """Whether this stream (of a closed run, having read nothing) starts after the run's last segment: the
        chunk before its offset ends a segment for good, or there is none (an offset past the journal's end)."""
        if self.offset == 0:
            return False
        before = await self._store.read_chunks(self.run_id, self.offset - 1, 1)
        if not before:
            return bool(await self._store.read_chunks(self.run_id, 0, 1))  # past the end of a journal that exists
        chunk = chunk_from_wire(before[0].chunk, before[0].offset)
        return isinstance(chunk, FinishChunk) and chunk.payload.step_result.reason != "suspended"

    async def aclose(self) -> None:
        """Stop reading the journal (the reader went away); the run itself is not affected."""
        reader = self._reader
        if reader is not None and not reader.done():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    def _ends_stream(self, finish: FinishChunk) -> bool:
        return self.follow == "segment" or finish.payload.step_result.reason != "suspended"

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    @property
    def full_stream(self) -> AsyncIterator[Chunk]:
        """Every chunk from ``offset`` to the run's ``finish`` chunk."""
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Chunk]:
        self._ensure_reader()
        index = 0
        while True:
            while index < len(self._chunks):
                yield self._chunks[index]
                index += 1
            if self._done:
                reader = self._reader
                if reader is not None and reader.done() and not reader.cancelled() and reader.exception():
                    raise reader.exception()  # type: ignore[misc]
                return
            await self._changed.wait()

    @property
    def text_stream(self) -> AsyncIterator[str]:
        """The assistant's text, delta by delta."""
        return self._iterate_text()

    async def _iterate_text(self) -> AsyncIterator[str]:
        async for chunk in self._iterate():
            if isinstance(chunk, TextDeltaChunk):
                yield chunk.payload.text

    async def result(self) -> GenerateResult:
        """Wait for the run to finish and collect its result."""
        chunks = [chunk async for chunk in self._iterate()]
        return collect_result(self.run_id, chunks)

    @property
    def text(self) -> Awaitable[str]:
        return self._field(lambda r: r.text)

    @property
    def tool_calls(self) -> Awaitable[list[ToolCallChunk]]:
        return self._field(lambda r: r.tool_calls)

    @property
    def tool_results(self) -> Awaitable[list[ToolResultChunk]]:
        return self._field(lambda r: r.tool_results)

    @property
    def finish_reason(self) -> Awaitable[str]:
        return self._field(lambda r: r.finish_reason)

    @property
    def usage(self) -> Awaitable[Usage]:
        return self._field(lambda r: r.usage)

    async def _field(self, pick: Callable[[GenerateResult], Any]) -> Any:
        return pick(await self.result())


def effective_chunks(chunks: list[Chunk]) -> list[Chunk]:
    """The chunks a client keeps: every ``step-reset`` drops the chunks of the failed attempt (from its
    ``discardFrom`` offset on; without one, the text of its step). A child run's reset, relayed as a
    ``tool-output`` of its call, drops that child's relayed chunks the same way."""
    kept: list[Chunk] = []
    for chunk in chunks:
        if isinstance(chunk, ToolOutputChunk) and is_nested_reset(chunk.payload.output):
            kept = drop_nested_attempt(kept, chunk)
        if isinstance(chunk, StepResetChunk):
            payload = chunk.payload
            if payload.discard_from is not None:
                kept = [c for c in kept if c.offset is None or c.offset < payload.discard_from]
            else:
                text_id = f"text-{payload.step_number}"
                kept = [c for c in kept if not (isinstance(c, TextDeltaChunk) and c.payload.id == text_id)]
        kept.append(chunk)
    return kept


def collect_result(run_id: str, chunks: list[Chunk]) -> GenerateResult:
    """Fold a run's chunks into its result; chunks of a reset step attempt are dropped."""
    chunks = effective_chunks(chunks)
    text_parts: list[str] = []
    finish: FinishChunk | None = None
    error: str | None = None
    suspend_payload: dict[str, Any] | None = None
    for chunk in chunks:
        if isinstance(chunk, TextDeltaChunk):
            text_parts.append(chunk.payload.text)
        elif isinstance(chunk, FinishChunk):
            finish = chunk
        elif isinstance(chunk, ErrorChunk):
            error = chunk.payload.error
        elif isinstance(chunk, ToolCallSuspendedChunk):
            p = chunk.payload
            suspend_payload = {
                "toolCallId": p.tool_call_id,
                "toolName": p.tool_name,
                "args": p.args,
                "suspendPayload": p.suspend_payload,
            }
        elif isinstance(chunk, ToolCallApprovalChunk):
            p2 = chunk.payload
            suspend_payload = {"toolCallId": p2.tool_call_id, "toolName": p2.tool_name, "args": p2.args}
    return GenerateResult(
        run_id=run_id,
        text="".join(text_parts),
        tool_calls=[c for c in chunks if isinstance(c, ToolCallChunk)],
        tool_results=[c for c in chunks if isinstance(c, ToolResultChunk)],
        finish_reason=finish.payload.step_result.reason if finish else "error",
        usage=finish.payload.output.usage if finish else Usage(),
        steps=finish.payload.output.steps if finish else 0,
        error=error,
        chunks=chunks,
        suspend_payload=suspend_payload if finish and finish.payload.step_result.reason == "suspended" else None,
    )
