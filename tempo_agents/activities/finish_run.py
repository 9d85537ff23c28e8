"""The finish activity: ends a segment when no other activity could (a failed or cancelled run, a batch
whose last call was lost, a step whose calls all ran in the workflow)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tempo_agents.activities.segment_close import close_segment
from tempo_agents.journal.writer import RunJournal, outbox_writes, store_outbox_writes
from tempo_agents.workflows.payloads import FinishInput

if TYPE_CHECKING:
    from tempo_agents.agent.registry import Registry


async def run_finish(registry: Registry, finish: FinishInput) -> None:
    """Write the outbox, then the end of the segment."""
    store = registry.store
    journal = RunJournal(store, finish.run_id)
    await store_outbox_writes(store, finish.run_id, finish.outbox)
    transcript = await registry.transcripts.get(finish.run_id)
    await journal.write(outbox_writes(finish.run_id, finish.outbox, transcript))
    close = finish.close
    await close_segment(registry, journal, finish.options, close, close.reason or "stop", close.usage)
