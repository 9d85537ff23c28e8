"""Writing a run's chunks to its journal, from activities."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from tempo_agents.journal import constructors, keys
from tempo_agents.journal.chunks import ChunkSource, StepFinishPayload, StepOutput, StepResult, ToolCallPayload
from tempo_agents.journal.outbox import StepFinishNote
from tempo_agents.store.base import ChunkWrite, StartFence, Store
from tempo_agents.store.transcript_cache import RunTranscript
from tempo_agents.tools.context import check_custom_chunk

__all__ = ["TEXT_FLUSH_SECONDS", "JournalToolWriter", "RunJournal", "step_finish_write"]

TEXT_FLUSH_SECONDS = 0.008
"""Text deltas are written at most this often (batched in between)."""


class RunJournal:
    """Appends chunks to one run's journal; text deltas are batched into few writes, in the background.

    Deltas never wait for the store: :meth:`streamed` buffers them and one background write at a time takes the
    buffer (at most once every ``TEXT_FLUSH_SECONDS``), so a store slower than the model makes the batches larger,
    not the model's stream slower. Every other write waits for the background write under way and writes what is
    still buffered first, so the journal keeps the order the chunks were made in. A background write that fails is
    raised by the next call (a superseded start, the store gone for good).

    A journal of one start of a local activity carries its ``fence``: once a later start of the same call is
    counted, every write through it is refused (``SupersededStartError``) and the superseded start stops.
    """

    def __init__(self, store: Store, run_id: str, fence: StartFence | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self.fence = fence
        self._text: list[ChunkWrite] = []
        self._last_flush = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._writing: asyncio.Task[None] | None = None
        self._failure: Exception | None = None

    def chunk(self, chunk_type: str, payload: Any, *, source: ChunkSource = "AGENT") -> dict[str, Any]:
        return constructors.chunk(self.run_id, chunk_type, payload, source=source)

    async def write(self, writes: Sequence[ChunkWrite]) -> None:
        await self.flush_text()
        await self.store.append_chunks(self.run_id, writes, self.fence)

    def write_soon(self, writes: Sequence[ChunkWrite]) -> None:
        """Write chunks within ``TEXT_FLUSH_SECONDS``, together with whatever streams by then (a step's
        ``step-start`` and the model's first tokens share one write)."""
        self._text.extend(writes)
        self._last_flush = time.monotonic()
        self._schedule()

    async def text_delta(self, step: int, text: str) -> None:
        await self.streamed(self.chunk("text-delta", {"id": f"text-{step}", "text": text}))

    async def streamed(self, chunk: dict[str, Any]) -> None:
        """Append a chunk that only matters while the step streams (deltas): batched, never keyed, written in the
        background. A delta goes at once when nothing was written in the last ``TEXT_FLUSH_SECONDS`` and nothing is
        being written; otherwise when that window ends, or the write under way does; so a provider that pauses
        never holds text back."""
        self._raise_failure()
        self._text.append(ChunkWrite(chunk))
        self._schedule()

    async def flush_text(self) -> None:
        """Write every buffered delta now, after the background write under way (to keep the order)."""
        while True:
            self._raise_failure()
            self._cancel_timer()
            if self._writing is None:
                if not self._text:
                    return
                self._start_writing()
            assert self._writing is not None
            await self._writing

    async def take_buffered(self) -> list[ChunkWrite]:
        """The chunks not written yet, handed to the caller to write with its own last write."""
        while self._writing is not None:
            self._cancel_timer()
            await self._writing
        self._cancel_timer()
        self._raise_failure()
        buffered, self._text = self._text, []
        return buffered

    def _schedule(self) -> None:
        """Start the background write of the buffer unless one is under way or due: at once when the last began
        ``TEXT_FLUSH_SECONDS`` ago or more, else when it will have."""
        if self._writing is not None or self._timer is not None or not self._text:
            return
        wait = self._last_flush + TEXT_FLUSH_SECONDS - time.monotonic()
        if wait > 0:
            self._timer = asyncio.get_running_loop().call_later(wait, self._start_writing)
        else:
            self._start_writing()

    def _start_writing(self) -> None:
        self._timer = None
        self._writing = asyncio.get_running_loop().create_task(self._write_in_background())

    async def _write_in_background(self) -> None:
        try:
            await self._write_batch()
        except Exception as error:  # kept for the next call to raise: the step goes no further
            self._failure = error
            return
        finally:
            self._writing = None
        self._schedule()  # what streamed meanwhile

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    async def _write_batch(self) -> None:
        self._last_flush = time.monotonic()
        if self._text:
            batch, self._text = self._text, []
            await self.store.append_chunks(self.run_id, batch, self.fence)


class JournalToolWriter:
    """The ``writer`` of a tool running inside a run: each chunk is durable, keyed by its sequence."""

    def __init__(
        self, journal: RunJournal, step: int, round: int, tool_call_id: str, tool_name: str, refusals: int = 0
    ) -> None:
        self._journal = journal
        self._step = step
        self._round = round
        self._refusals = refusals
        self._tool_call_id = tool_call_id
        self._tool_name = tool_name
        self._sequence = 0

    def _next_key(self, kind: str) -> str:
        self._sequence += 1
        return keys.call_round(self._step, self._tool_call_id, self._round, f"{kind}:{self._sequence}", self._refusals)

    async def write(self, value: Any) -> None:
        payload = {"output": value, "toolCallId": self._tool_call_id, "toolName": self._tool_name}
        chunk = self._journal.chunk("tool-output", payload, source="USER")
        await self._journal.write([ChunkWrite(chunk, self._next_key("tool-output"))])

    async def custom(self, chunk: dict[str, Any]) -> None:
        check_custom_chunk(chunk)
        body = {"runId": self._journal.run_id, "from": "USER", **constructors.to_jsonable(chunk)}
        await self._journal.write([ChunkWrite(body, self._next_key("data"))])


def step_finish_write(run_id: str, note: StepFinishNote, transcript: RunTranscript) -> ChunkWrite:
    """``step-finish`` of a step, with the text and tool calls of its assistant message."""
    assistant = transcript.message(note.step, "assistant")
    output = StepOutput(
        text=assistant.text if assistant else "",
        tool_calls=[
            ToolCallPayload(tool_call_id=c.tool_call_id, tool_name=c.tool_name, args=c.args)
            for c in (assistant.tool_calls if assistant else [])
        ],
        usage=note.usage,
    )
    payload = StepFinishPayload(
        step_result=StepResult(reason=note.reason, is_continued=note.is_continued), output=output
    )
    return ChunkWrite(constructors.chunk(run_id, "step-finish", payload), keys.step_finish(note.step, note.segment))
