"""The finish activity: the run's last chunks, and its messages saved to the memory thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tempo_agents.activities._journal import RunJournal, apply_workflow_writes, pending_writes, run_output
from tempo_agents.activities.model_step import HISTORY_STEP
from tempo_agents.agent.chunks import FinishPayload, StepResult, ToolResultPayload
from tempo_agents.store.base import ChunkWrite
from tempo_agents.workflows.payloads import FinishInput

if TYPE_CHECKING:
    from tempo_agents.agent.app import App


async def run_finish(app: App, finish: FinishInput) -> None:
    """Close a journal segment: ``step-finish`` of the last step, ``error`` when the run failed, ``finish``.

    The run's messages so far are saved to its memory thread first (a suspended run's too, so a
    thread reload shows the suspended call).
    """
    store = app.store
    journal = RunJournal(store, finish.run_id)
    await apply_workflow_writes(store, finish.run_id, finish.writes)
    transcript = await store.get_transcript(finish.run_id)
    memory = finish.options.memory
    if memory is not None:
        own = [entry.memory_message or entry.message for entry in transcript if entry.step > HISTORY_STEP]

        await store.append_thread_messages(memory.thread, memory.resource, finish.run_id, own)

    writes = pending_writes(finish.run_id, finish.pending, finish.previous_step, transcript)
    if finish.error is not None:
        writes.append(ChunkWrite(journal.chunk("error", {"error": finish.error}), f"error:{finish.segment}"))
    await journal.write(writes)

    results: list[ToolResultPayload] = []
    offset = 0
    while batch := await store.read_chunks(finish.run_id, offset, 1000):
        results += [
            ToolResultPayload.model_validate(e.chunk["payload"]) for e in batch if e.chunk["type"] == "tool-result"
        ]
        offset = batch[-1].offset + 1
    payload = FinishPayload(
        step_result=StepResult(reason=finish.reason),
        output=run_output(transcript, results, finish.steps, finish.usage),
    )
    await journal.write([ChunkWrite(journal.chunk("finish", payload), f"finish:{finish.segment}")])
