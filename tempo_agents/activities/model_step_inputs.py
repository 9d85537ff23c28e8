"""What a model step stores before it calls the model, and the chunks it journals first.

Into the run's transcript: a fork's copy of its origin (on its first step), the run's new messages with its
memory thread's history, what was said on the thread while the run waited, and the workflow's outbox. Then the
step's first chunks: the outbox's, ``step-reset`` when an earlier attempt may have streamed, and ``step-start``;
they are journaled with the model's first tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tempo_agents.activities.model_step_attempt import StepAttempt
from tempo_agents.activities.waiting_transcript import catch_up
from tempo_agents.forks import seed_fork
from tempo_agents.journal import constructors, keys
from tempo_agents.journal.outbox_flush import store_outbox
from tempo_agents.store.base import HISTORY_STEP, INPUT_STEP, ChunkWrite, Store, TranscriptEntry
from tempo_agents.store.transcript_cache import RunTranscript
from tempo_agents.workflows.payloads import ModelStepInput

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry

__all__ = ["OpenedStep", "open_step"]


@dataclass(frozen=True)
class OpenedStep:
    """A step's inputs, stored: the chunks to journal with the first tokens, and the run's transcript."""

    writes: list[ChunkWrite]
    """The outbox's chunks, a ``step-reset`` for a retried attempt, and ``step-start``, in that order."""
    transcript: RunTranscript


async def open_step(registry: Registry, step_input: ModelStepInput, attempt: StepAttempt) -> OpenedStep:
    """Store the step's inputs and the workflow's outbox; the chunks that open the step."""
    store = registry.store
    await _store_inputs(store, step_input)
    writes, transcript = await store_outbox(store, registry.transcripts, step_input.run_id, step_input.outbox)
    writes += await _first_chunks(store, step_input, attempt)
    return OpenedStep(writes, transcript)


async def _store_inputs(store: Store, step_input: ModelStepInput) -> None:
    """A fork's copy of its origin, the run's new messages (with its thread's history), what its thread said."""
    run_id = step_input.run_id
    fork = step_input.options.fork
    if fork is not None and step_input.step == 0:  # a fork starts from its origin's transcript (copied from the store)
        await seed_fork(store, run_id, fork)
    memory = step_input.options.memory
    if step_input.new_messages:
        entries = [
            TranscriptEntry(INPUT_STEP, f"input-{i:04d}", i, message.to_wire())
            for i, message in enumerate(step_input.new_messages)
        ]
        if memory is not None and fork is None:  # a fork's copy holds its origin's thread history
            history = await store.get_thread_messages(memory.thread, memory.resource)
            entries += [TranscriptEntry(HISTORY_STEP, f"history-{i:06d}", i, m) for i, m in enumerate(history)]
        await store.put_transcript(run_id, entries)
    if step_input.catch_up is not None and memory is not None:  # it yielded its thread while it waited
        await catch_up(store, run_id, memory.thread, memory.resource, step_input.step, step_input.catch_up)


async def _first_chunks(store: Store, step_input: ModelStepInput, attempt: StepAttempt) -> list[ChunkWrite]:
    """``step-reset`` (a retried attempt: readers discard what the earlier one streamed), then ``step-start``."""
    run_id, step = step_input.run_id, step_input.step
    writes: list[ChunkWrite] = []
    if attempt.number > 1:
        started = await store.offset_of(run_id, keys.step_start(step))
        discard_from = None if started is None else started + 1
        writes.append(ChunkWrite(constructors.step_reset(run_id, step, attempt.number, discard_from)))
    start = attempt.journal.chunk("step-start", {"stepNumber": step, "warnings": []})
    writes.append(ChunkWrite(start, keys.step_start(step)))
    return writes
