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
    """Appends chunks to one run's journal; text deltas are batched into few writes.

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
        self._pending_flush: asyncio.Task[None] | None = None

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
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(TEXT_FLUSH_SECONDS, self._flush_soon)

    async def text_delta(self, step: int, text: str) -> None:
        await self.streamed(self.chunk("text-delta", {"id": f"text-{step}", "text": text}))

    async def streamed(self, chunk: dict[str, Any]) -> None:
        """Append a chunk that only matters while the step streams (deltas): batched, never keyed.

        A delta is written at once when none was written in the last ``TEXT_FLUSH_SECONDS``; otherwise a
        timer writes the batch when that window ends, so a provider that pauses never holds text back.
        """
        self._text.append(ChunkWrite(chunk))
        wait = self._last_flush + TEXT_FLUSH_SECONDS - time.monotonic()
        if wait <= 0:
            await self.flush_text()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self._flush_soon)

    def _flush_soon(self) -> None:
        self._timer = None
        if self._text and (self._pending_flush is None or self._pending_flush.done()):
            self._pending_flush = asyncio.get_running_loop().create_task(self._write_batch())

    async def flush_text(self) -> None:
        """Write every buffered delta now (after a timed write still under way, to keep the order)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending_flush is not None and not self._pending_flush.done():
            await self._pending_flush
        await self._write_batch()

    async def take_buffered(self) -> list[ChunkWrite]:
        """The chunks not written yet, handed to the caller to write with its own last write."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending_flush is not None and not self._pending_flush.done():
            await self._pending_flush
        buffered, self._text = self._text, []
        return buffered

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
