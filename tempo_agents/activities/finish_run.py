"""The finish activity: ends a segment when no other activity could (a failed or cancelled run, a batch
whose last call was lost, a step whose calls all ran in the workflow)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tempo_agents.activities.segment_close import close_segment
from tempo_agents.journal.outbox_flush import write_outbox
from tempo_agents.journal.writer import RunJournal
from tempo_agents.workflows.payloads import FinishInput

if TYPE_CHECKING:
    from tempo_agents.agent.registry import Registry


async def run_finish(registry: Registry, finish: FinishInput) -> None:
    """Write the outbox, then the end of the segment."""
    await write_outbox(registry.store, registry.transcripts, finish.run_id, finish.outbox)
    journal = RunJournal(registry.store, finish.run_id)
    close = finish.close
    await close_segment(
        registry, journal, finish.options, close, close.reason or "stop", close.usage, agent_id=finish.agent_id
    )
