"""A started run is visible at once: its ``start`` chunk is journaled by the client that started it."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.exceptions import WorkflowAlreadyStartedError

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tests.conftest import AppFactory, running_worker

REUSE_INTERVAL_SECONDS = 1.0
"""The dev server's ``history.workflowIdReuseMinimalInterval``: within it, Temporal refuses a second start of an id
whatever the reuse policy."""


async def test_a_run_shows_its_start_before_any_worker_picks_it_up(make_app: AppFactory) -> None:
    """With no worker polling, a reader already sees the run's ``start`` (once, at offset 0); when a worker comes,
    the run goes on in the same journal, and the first activity's copy of ``start`` replaces it in place."""
    app = make_app([Agent(id="quick", model=ScriptedModel([ScriptedResponse(text="Hi there.")]))])
    stream = await app.agent("quick").stream("hello")
    chunks = stream.full_stream.__aiter__()
    first = await asyncio.wait_for(chunks.__anext__(), timeout=10)
    assert first.type == "start" and first.offset == 0
    assert first.model_dump(mode="json", by_alias=True)["payload"] == {"agentId": "quick"}

    async with running_worker(app):
        result = await stream.result()
    assert result.text == "Hi there."
    journal = [c async for c in app.attach(stream.run_id).full_stream]
    assert [c.type for c in journal].count("start") == 1
    assert [c.offset for c in journal] == list(range(len(journal)))
    # The starting client's stream had its ``start`` in hand (no read back) and then read the rest: the same
    # chunks, each once, as any later reader of the journal.
    streamed = [c async for c in stream.full_stream]
    assert [c.model_dump(mode="json", by_alias=True) for c in streamed] == [
        c.model_dump(mode="json", by_alias=True) for c in journal
    ]


async def test_a_taken_run_id_leaves_the_existing_runs_journal_alone(make_app: AppFactory) -> None:
    """A caller-chosen run id may be taken: nothing is journaled before the start succeeds, so a second start under
    the id of another agent's run fails and that run's ``start`` still names its own agent."""
    app = make_app(
        [
            Agent(id="first", model=ScriptedModel([ScriptedResponse(text="One.")])),
            Agent(id="second", model=ScriptedModel([ScriptedResponse(text="Two.")])),
        ]
    )
    async with running_worker(app):
        result = await app.agent("first").generate("hello", run_id="taken-id")
        with pytest.raises(WorkflowAlreadyStartedError):
            await app.agent("second").stream("hello", run_id="taken-id")
        # Past Temporal's minimal interval between two starts of one id (1 s on the dev server), a closed run's id
        # is still taken: it names that run's journal.
        await asyncio.sleep(REUSE_INTERVAL_SECONDS + 0.5)
        with pytest.raises(WorkflowAlreadyStartedError):
            await app.agent("second").stream("hello", run_id="taken-id")
    journal = [c async for c in app.attach(result.run_id).full_stream]
    starts = [c.model_dump(mode="json", by_alias=True)["payload"] for c in journal if c.type == "start"]
    assert starts == [{"agentId": "first"}]
    assert result.text == "One."
