"""Two starts of one model step running at once: only the newest writes into the run's journal.

A local model step's workflow task can time out while the step still runs on a live worker (a starved machine
sends no task heartbeat in time); the next workflow task starts the step again, and the first start is never told
to stop. An activity's attempt can outlive its heartbeat timeout the same way (its heartbeats starved, or its
write waiting out a store outage): Temporal starts attempt 2 while attempt 1 still has text to write. Here both
starts are the worker's real model-step activity (run by Temporal's activity test environment, as local
activities at attempt 1 each or as an activity's attempts 1 and 2) on a real store, one run and one step, and the
order of their work is forced by gates in the model: the older start streams part of its text, the newer one
starts, and the older one goes on streaming either after the newer one has finished or while it still streams. A
reader of the journal (``effective_chunks``) must see the model's text once, after its ``step-start``; the
superseded start stops at its next write.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

import pytest
from temporalio.testing import ActivityEnvironment

from tempo_agents import Agent
from tempo_agents.activities.agent_activities import AgentActivities
from tempo_agents.activities.registry import Registry
from tempo_agents.errors import SupersededStartError
from tempo_agents.journal import keys
from tempo_agents.journal.chunks import Chunk, StepStartChunk, TextDeltaChunk, chunk_from_wire
from tempo_agents.models.messages import Message, TextPart
from tempo_agents.models.model import FinishEvent, ModelEvent, ModelRequest, TextDelta
from tempo_agents.store import Store
from tempo_agents.streams.stream import effective_chunks
from tempo_agents.workflows.payloads import ModelStepInput, ModelStepResult, RunOptions

pytestmark = pytest.mark.timeout(60)

RUN_ID = "run-superseded"
STEP = 5
FIRST, REST = "Step ", "5 is done."


class GatedModel:
    """Streams ``FIRST`` then ``REST``; each call waits for its own gate between the two."""

    provider = "scripted"
    model_id = "gated"

    def __init__(self) -> None:
        self.gates: list[asyncio.Event] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        gate = asyncio.Event()
        self.gates.append(gate)
        yield TextDelta(text=FIRST)
        await gate.wait()
        yield TextDelta(text=REST)
        yield FinishEvent(finish_reason="stop")


def step_input() -> ModelStepInput:
    return ModelStepInput(
        run_id=RUN_ID,
        agent_id="gated",
        step=STEP,
        options=RunOptions(),
        new_messages=[Message(role="user", content=[TextPart(text="Which step?")])],
    )


KINDS = {
    "local": (True, (1, 1), 2),
    "activity": (False, (1, 2), 1),
}
"""How the two starts run: as local activities (a new workflow task starts the step again at attempt 1, and the
store counts the second start as 2), or as an activity's attempts 1 and 2 (the retry counts itself as the first
retry; the first attempt counts nothing)."""


def run_start(activities: AgentActivities, local: bool, attempt: int) -> asyncio.Task[ModelStepResult]:
    """One start of the step, as a local activity or an activity's attempt ``attempt``."""
    env = ActivityEnvironment()
    env.info = dataclasses.replace(ActivityEnvironment.default_info(), is_local=local, attempt=attempt)
    return asyncio.create_task(env.run(activities.model_step, step_input()))


async def journal(store: Store) -> list[Chunk]:
    return [chunk_from_wire(e.chunk, e.offset) for e in await store.read_chunks(RUN_ID)]


async def texts_written(store: Store, count: int) -> None:
    """Return once ``count`` text deltas are in the journal."""
    while sum(isinstance(c, TextDeltaChunk) for c in await journal(store)) < count:
        await store.wait_for_chunks(RUN_ID, len(await store.read_chunks(RUN_ID)), timeout=1.0)


async def starts_counted(store: Store, count: int) -> None:
    """Return once the step's starts counted in the store reach ``count``."""
    counter = f"{keys.model_step_outcome(STEP)}:starts"
    while ((await store.saved_outcome(RUN_ID, counter)) or {}).get("starts") != count:
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("older_resumes", ["after the newer start finished", "while the newer start streams"])
async def test_a_superseded_start_of_a_step_writes_nothing_more(store: Store, kind: str, older_resumes: str) -> None:
    local, (older_attempt, newer_attempt), newer_counted = KINDS[kind]
    model = GatedModel()
    activities = AgentActivities(Registry(agents=[Agent(id="gated", model=model)], store=store))

    older = run_start(activities, local, older_attempt)
    await texts_written(store, 1)  # the older start streamed its first text, then waits
    newer = run_start(activities, local, newer_attempt)
    await starts_counted(store, newer_counted)
    await texts_written(store, 2)  # the newer start streamed its first text too, and waits
    if older_resumes == "after the newer start finished":
        model.gates[1].set()
        result = await newer
        model.gates[0].set()
        [older_ended] = await asyncio.gather(older, return_exceptions=True)
    else:
        model.gates[0].set()
        [older_ended] = await asyncio.gather(older, return_exceptions=True)
        model.gates[1].set()
        result = await newer

    assert result.finish_reason == "stop"
    seen = effective_chunks(await journal(store))
    deltas = [c for c in seen if isinstance(c, TextDeltaChunk)]
    assert "".join(d.payload.text for d in deltas) == FIRST + REST
    [start] = [c for c in seen if isinstance(c, StepStartChunk)]
    assert all((start.offset or 0) < (d.offset or 0) for d in deltas)
    transcript = await store.get_transcript(RUN_ID)
    [assistant] = [e for e in transcript if e.step == STEP and e.part == "assistant"]
    assert Message.model_validate(assistant.message).content == [TextPart(text=FIRST + REST)]
    # The older start was stopped by its first write after the newer start was counted.
    assert isinstance(older_ended, SupersededStartError), older_ended
