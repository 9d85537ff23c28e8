"""The finish activity: ends a segment when no other activity could (a failed or cancelled run, a batch
whose last call was lost, a step whose calls all ran in the workflow)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tempo_agents.activities.segment_close import close_segment
from tempo_agents.journal import constructors, keys
from tempo_agents.journal.outbox_flush import write_outbox
from tempo_agents.journal.writer import RunJournal
from tempo_agents.workflows.payloads import FinishInput

__all__ = ["ABORTED", "abort_after_a_closed_segment", "run_finish"]

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry
    from tempo_agents.store.base import Store

ABORTED = "aborted"
"""The finish reason of a run cancelled from outside."""


async def run_finish(registry: Registry, finish: FinishInput) -> None:
    """Write the outbox, then the end of the segment."""
    finish = await abort_after_a_closed_segment(registry.store, finish)
    await write_outbox(registry.store, registry.transcripts, finish.run_id, finish.outbox)
    journal = RunJournal(registry.store, finish.run_id)
    close = finish.close
    await close_segment(
        registry, journal, finish.options, close, close.reason or "stop", close.usage, agent_id=finish.agent_id
    )


async def abort_after_a_closed_segment(store: Store, finish: FinishInput) -> FinishInput:
    """The abort of a cancelled run, moved past a segment that its journal shows closed already.

    A cancellation can reach the workflow in the same task as the result of the activity that ended the segment
    (a model step that called no tool, the last call of a batch): the SDK then raises the cancellation and the
    workflow never sees that result, so it still takes the segment for open. Its journal holds that segment's
    ``finish`` but not its ``abort``, and the abort goes into a segment of its own, as for a run cancelled while
    it waits (``start``, ``abort``, ``finish``): readers see the run's end after everything it wrote. A retry of
    this activity finds the same and writes the same keys again; an abort already written in its segment is
    left where it is."""
    close = finish.close
    segment = close.segment
    if close.reason != ABORTED or await store.offset_of(finish.run_id, keys.finish(segment)) is None:
        return finish
    if await store.offset_of(finish.run_id, keys.abort(segment)) is not None:
        return finish
    moved, after = keys.abort(segment), segment + 1
    records = [constructors.start(finish.run_id, finish.agent_id, after)]
    records += [constructors.abort(finish.run_id, after) if r.key == moved else r for r in finish.outbox.records]
    step_finish = finish.outbox.step_finish
    if step_finish is not None and step_finish.segment == segment:
        step_finish = step_finish.model_copy(update={"segment": after})
    outbox = finish.outbox.model_copy(update={"records": records, "step_finish": step_finish})
    return finish.model_copy(update={"outbox": outbox, "close": close.model_copy(update={"segment": after})})
