"""Writing a run's chunks to its journal from activities."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from tempo_agents.agent.chunks import (
    ChunkSource,
    RunOutput,
    StepFinishPayload,
    StepOutput,
    StepResult,
    ToolCallPayload,
)
from tempo_agents.models.messages import Message
from tempo_agents.store.base import ChunkWrite, Store, TranscriptEntry
from tempo_agents.tools.context import check_custom_chunk
from tempo_agents.workflows.payloads import JournalRecord, StepFinishNote, WorkflowWrites

TEXT_FLUSH_SECONDS = 0.03


def make_chunk(run_id: str, chunk_type: str, payload: Any, *, source: ChunkSource = "AGENT") -> dict[str, Any]:
    """A chunk in wire form."""
    if hasattr(payload, "to_wire"):
        payload = payload.to_wire()
    return {"type": chunk_type, "runId": run_id, "from": source, "payload": to_jsonable(payload)}


def to_jsonable(value: Any) -> Any:
    """A JSON-ready copy of a value (pydantic models by alias); raises ``ValueError`` when impossible."""
    try:
        return to_jsonable_python(value, by_alias=True)
    except Exception as error:
        raise ValueError(str(error)) from error


class RunJournal:
    """Appends chunks to one run's journal; text deltas are batched into few writes."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self._text: list[ChunkWrite] = []
        self._last_flush = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._pending_flush: asyncio.Task[None] | None = None

    def chunk(self, chunk_type: str, payload: Any, *, source: ChunkSource = "AGENT") -> dict[str, Any]:
        return make_chunk(self.run_id, chunk_type, payload, source=source)

    async def write(self, writes: Sequence[ChunkWrite]) -> None:
        await self.flush_text()
        await self.store.append_chunks(self.run_id, writes)

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

    async def _write_batch(self) -> None:
        self._last_flush = time.monotonic()
        if self._text:
            batch, self._text = self._text, []
            await self.store.append_chunks(self.run_id, batch)


class JournalToolWriter:
    """The ``writer`` of a tool running inside a run: each chunk is durable, keyed by its sequence."""

    def __init__(self, journal: RunJournal, key_prefix: str, tool_call_id: str, tool_name: str) -> None:
        self._journal = journal
        self._key = key_prefix
        self._tool_call_id = tool_call_id
        self._tool_name = tool_name
        self._sequence = 0

    def _next_key(self, kind: str) -> str:
        self._sequence += 1
        return f"{self._key}:{kind}:{self._sequence}"

    async def write(self, value: Any) -> None:
        payload = {"output": value, "toolCallId": self._tool_call_id, "toolName": self._tool_name}
        chunk = self._journal.chunk("tool-output", payload, source="USER")
        await self._journal.write([ChunkWrite(chunk, self._next_key("tool-output"))])

    async def custom(self, chunk: dict[str, Any]) -> None:
        check_custom_chunk(chunk)
        body = {"runId": self._journal.run_id, "from": "USER", **to_jsonable(chunk)}
        await self._journal.write([ChunkWrite(body, self._next_key("data"))])


def transcript_messages(entries: Sequence[TranscriptEntry]) -> list[Message]:
    return [Message.model_validate(entry.message) for entry in entries]


def pending_writes(
    run_id: str,
    pending: Sequence[JournalRecord],
    previous_step: StepFinishNote | None,
    transcript: Sequence[TranscriptEntry],
) -> list[ChunkWrite]:
    """The chunks the workflow handed over, then the ``step-finish`` of the step before."""
    writes = [ChunkWrite(record.chunk, record.key) for record in pending]
    if previous_step is not None:
        writes.append(
            ChunkWrite(
                step_finish_chunk(run_id, previous_step, transcript),
                f"{previous_step.step}:step-finish:{previous_step.segment}",
            )
        )
    return writes


def step_finish_chunk(run_id: str, note: StepFinishNote, transcript: Sequence[TranscriptEntry]) -> dict[str, Any]:
    assistant = next(
        (Message.model_validate(e.message) for e in transcript if e.step == note.step and e.part == "assistant"),
        None,
    )
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
    return make_chunk(run_id, "step-finish", payload)


def run_output(transcript: Sequence[TranscriptEntry], tool_results: list[Any], steps: int, usage: Any) -> RunOutput:
    assistants = [Message.model_validate(e.message) for e in transcript if e.part == "assistant"]
    return RunOutput(
        text="".join(message.text for message in assistants),
        tool_calls=[
            ToolCallPayload(tool_call_id=c.tool_call_id, tool_name=c.tool_name, args=c.args)
            for message in assistants
            for c in message.tool_calls
        ],
        tool_results=tool_results,
        usage=usage,
        steps=steps,
    )


async def apply_workflow_writes(store: Store, run_id: str, writes: WorkflowWrites) -> None:
    """Store the transcript entries and thread state the workflow produced (idempotent upserts)."""
    if writes.transcript:
        entries = [TranscriptEntry(r.step, r.part, r.position, r.message) for r in writes.transcript]
        await store.put_transcript(run_id, entries)
    for record in writes.thread_state:
        await store.set_thread_state(record.thread_id, record.type, record.value)
