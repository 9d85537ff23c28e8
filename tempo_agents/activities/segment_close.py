"""Ending a journal segment: ``step-finish`` of the step in progress, ``error``, memory, then ``finish``.

Called by whichever activity ends the segment (a model step that called no tool, the last tool call of a
batch, or the finish activity when neither could); every write is keyed, so two callers that both end
the same segment (two calls of a batch ending at once) write the same chunks once.
"""

from __future__ import annotations

from tempo_agents.activities.registry import Registry
from tempo_agents.activities.run_events import notify_run_end
from tempo_agents.activities.waiting_transcript import is_said_by_others
from tempo_agents.journal import constructors, keys
from tempo_agents.journal.chunks import FinishPayload, RunOutput, StepResult, ToolCallPayload, ToolResultPayload
from tempo_agents.journal.writer import RunJournal, step_finish_write
from tempo_agents.metrics import record_segment_end
from tempo_agents.models.usage import Usage
from tempo_agents.store.base import HISTORY_STEP, ChunkWrite
from tempo_agents.store.transcript_cache import RunTranscript
from tempo_agents.workflows.payloads import RunOptions, SegmentClose

__all__ = ["close_segment"]


async def close_segment(
    registry: Registry,
    journal: RunJournal,
    options: RunOptions,
    close: SegmentClose,
    reason: str,
    usage: Usage,
    transcript: RunTranscript | None = None,
    *,
    agent_id: str | None = None,
) -> None:
    """Write the end of ``close.segment`` with finish ``reason`` and the run's total ``usage``.

    The run's messages so far are saved to its memory thread first (a suspended run's too, so a thread
    reload shows the suspended call). ``transcript``: the run's whole transcript, when the caller has it.
    ``agent_id``: the run's agent, whose channels hear of the run's end (``run.*`` events).
    """
    store = registry.store
    run_id = journal.run_id
    if transcript is None:
        transcript = await registry.transcripts.get(run_id)
    memory = options.memory
    if memory is not None:
        own = [
            entry.memory_message or entry.message
            for entry in transcript.entries
            if entry.step > HISTORY_STEP and not is_said_by_others(entry)
        ]
        await store.append_thread_messages(memory.thread, memory.resource, run_id, own)

    writes: list[ChunkWrite] = []
    if close.step_finish is not None:
        writes.append(step_finish_write(run_id, close.step_finish, transcript))
    if close.abandoned_step is not None:
        started = await store.offset_of(run_id, keys.step_start(close.abandoned_step))
        if started is not None:
            reset = constructors.step_reset(run_id, close.abandoned_step, 0, started + 1)
            writes.append(ChunkWrite(reset, keys.step_abandoned(close.abandoned_step)))
    if close.error is not None:
        writes.append(ChunkWrite(journal.chunk("error", {"error": close.error}), keys.error(close.segment)))
    results: list[ToolResultPayload] = []
    offset = 0
    while batch := await store.read_chunks(run_id, offset, 1000):
        results += [
            ToolResultPayload.model_validate(e.chunk["payload"]) for e in batch if e.chunk["type"] == "tool-result"
        ]
        offset = batch[-1].offset + 1
    messages = transcript.messages()
    assistants = [m for e, m in zip(transcript.entries, messages, strict=True) if e.part == "assistant"]
    output = RunOutput(
        text="".join(message.text for message in assistants),
        tool_calls=[
            ToolCallPayload(tool_call_id=c.tool_call_id, tool_name=c.tool_name, args=c.args)
            for message in assistants
            for c in message.tool_calls
        ],
        tool_results=results,
        usage=usage,
        steps=close.steps,
    )
    payload = FinishPayload(step_result=StepResult(reason=reason), output=output)
    writes.append(ChunkWrite(journal.chunk("finish", payload), keys.finish(close.segment)))
    await journal.write(writes)
    record_segment_end(reason)
    if agent_id is not None:
        await notify_run_end(registry, run_id, agent_id, reason, close.error)
