"""A cancellation that reaches the workflow in the same task as the result of the activity that ended the segment.

The SDK then raises the cancellation and drops that result, so the workflow still takes the segment for open while
its journal already holds the segment's ``finish``. The race is forced, not waited for: one worker runs only the
activities, another only the workflow; the workflow's worker is stopped while the last model step is inside the
model, the run is cancelled, the step completes, and only then does a workflow worker come back, so the one workflow
task it takes carries both the cancellation and the step's result. The journal must still end ``abort`` … ``finish``
``aborted`` after everything the run wrote, as readers expect of any cancelled run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Literal

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import CancelledError
from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkerConfig

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models import ModelEvent, ModelRequest
from tests.conftest import AppFactory

PATIENCE = 120.0
"""Only so that a broken build fails instead of hanging: nothing here is timed."""


class GatedModel(ScriptedModel):
    """A scripted model whose step ``gated`` waits, inside the model, until ``gate`` is set."""

    def __init__(self, responses: Sequence[ScriptedResponse], gated: int) -> None:
        super().__init__(list(responses))
        self.gated = gated
        self.reached = asyncio.Event()
        self.gate = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.step == self.gated:
            self.reached.set()
            await self.gate.wait()
        async for event in super().stream(request):
            yield event


async def _note(data: dict[str, str], ctx: ToolContext) -> dict[str, str]:
    return {"noted": data["text"]}


class Only(SimplePlugin):
    """Keeps one kind of task on a worker: ``activities`` (no workflow) or ``workflows`` (no activity)."""

    def __init__(self, kind: Literal["activities", "workflows"]) -> None:
        super().__init__(f"tests.only-{kind}")
        self.kind = kind

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        config = super().configure_worker(config)
        config["workflows" if self.kind == "activities" else "activities"] = []
        return config


ONLY_ACTIVITIES = Only("activities")
ONLY_WORKFLOWS = Only("workflows")


async def _until_completed(app: App, run_id: str, activities: int) -> None:
    """Wait until the run's history holds ``activities`` completed activities."""
    handle = app.client.get_workflow_handle(run_id)
    completed = EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
    async with asyncio.timeout(PATIENCE):
        while [e.event_type for e in (await handle.fetch_history()).events].count(completed) < activities:
            await asyncio.sleep(0.1)


@pytest.mark.parametrize("steps", [1, 2], ids=["first-step", "after-a-tool-call"])
async def test_a_cancellation_that_arrives_with_the_last_steps_result_ends_the_journal_with_abort_then_finish(
    make_app: AppFactory, steps: int
) -> None:
    responses = [ScriptedResponse(tool_calls=[ScriptedToolCall("note", {"text": "a"}, id="n-1")])] * (steps - 1)
    model = GatedModel([*responses, ScriptedResponse(text="All done here.")], gated=steps - 1)
    note = create_tool(id="note", description="Notes a text", execute=_note)
    app = make_app([Agent(id="racer", model=model, tools={"note": note})])
    async with app.worker(plugins=[ONLY_ACTIVITIES]):
        async with app.worker(plugins=[ONLY_WORKFLOWS]):
            stream = await app.agent("racer").stream("finish up")
            await asyncio.wait_for(model.reached.wait(), PATIENCE)  # the last step is inside the model
        run_id = stream.run_id
        handle = app.client.get_workflow_handle(run_id)
        await handle.cancel()  # no workflow worker: the cancellation waits in the run's next workflow task
        model.gate.set()
        await _until_completed(app, run_id, 2 * steps - 1)  # every model step and tool call, the last step too
        async with app.worker(plugins=[ONLY_WORKFLOWS]):
            with pytest.raises(WorkflowFailureError) as failure:
                await asyncio.wait_for(handle.result(), PATIENCE)
    assert isinstance(failure.value.cause, CancelledError)

    entries = await app.store.read_chunks(run_id, 0, 1000)
    kinds = [entry.chunk["type"] for entry in entries]
    finishes = [e.chunk["payload"]["stepResult"]["reason"] for e in entries if e.chunk["type"] == "finish"]
    # The step's own end, as its activity wrote it, then the abort in a segment of its own.
    assert finishes == ["stop", "aborted"], kinds
    assert kinds[-3:] == ["start", "abort", "finish"], kinds
    assert kinds.count("start") == 2 and kinds.count("abort") == 1, kinds
    assert [e.offset for e in entries] == list(range(len(entries)))
