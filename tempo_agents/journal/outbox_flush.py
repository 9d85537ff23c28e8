"""Writing the workflow's outbox: the first thing the run's next activity does.

The outbox (``outbox.py``) holds what only the workflow knows: chunks, transcript entries and thread state.
The store writes go first (the ``step-finish`` of the step before is built from the transcript), then the
chunks, in the outbox's order. Every write is an upsert by key, so an outbox handed over twice (its activity
failed and the workflow gave it to the next one) writes nothing twice.
"""

from __future__ import annotations

from tempo_agents.journal.outbox import JournalOutbox
from tempo_agents.journal.writer import step_finish_write
from tempo_agents.store.base import ChunkWrite, Store, TranscriptEntry
from tempo_agents.store.transcript_cache import RunTranscript, TranscriptCache

__all__ = ["store_outbox", "write_outbox"]


async def write_outbox(store: Store, transcripts: TranscriptCache, run_id: str, outbox: JournalOutbox) -> None:
    """Write an outbox now (an empty one costs nothing)."""
    if outbox.is_empty():
        return
    chunks, _ = await store_outbox(store, transcripts, run_id, outbox)
    await store.append_chunks(run_id, chunks)


async def store_outbox(
    store: Store, transcripts: TranscriptCache, run_id: str, outbox: JournalOutbox
) -> tuple[list[ChunkWrite], RunTranscript]:
    """Store an outbox's transcript entries and thread state; return its chunks, for the caller to write with
    its own first write, and the run's transcript with the entries just stored."""
    if outbox.transcript:
        entries = [TranscriptEntry(r.step, r.part, r.position, r.message) for r in outbox.transcript]
        await store.put_transcript(run_id, entries)
    for record in outbox.thread_state:
        await store.set_thread_state(record.thread_id, record.type, record.value, run_id=run_id)
    transcript = await transcripts.get(run_id)
    chunks = [ChunkWrite(record.chunk, record.key) for record in outbox.records]
    if outbox.step_finish is not None:
        chunks.append(step_finish_write(run_id, outbox.step_finish, transcript))
    return chunks, transcript
