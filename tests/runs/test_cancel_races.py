"""A cancellation that races the result of the activity that ended the segment.

In the same workflow task: the SDK then raises the cancellation and drops that result, so the workflow still takes
the segment for open while its journal already holds the segment's ``finish``. The race is forced, not waited for:
one worker runs only the activities, another only the workflow; the workflow's worker is stopped while the last
model step is inside the model, the run is cancelled, the step completes, and only then does a workflow worker come
back, so the one workflow task it takes carries both the cancellation and the step's result.

In an earlier workflow task: the workflow asks the step's activity to stop and waits for it, and the activity
completes anyway (it finished before the request reached it, or its model went on regardless); the SDK then hands
the workflow the step's result as if nothing had been asked. The run must still end cancelled: its cancellation was
accepted. Forced by a model that goes on after the activity is told to stop.

Either way the journal must end ``abort`` … ``finish`` ``aborted`` after everything the run wrote, as readers
expect of any cancelled run.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import CancelledError
from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkerConfig

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tests.conftest import AppFactory
from tests.support.gated_models import Deaf, DeafModel, DeafTool, GatedModel

PATIENCE = 120.0
"""Only so that a broken build fails instead of hanging: nothing here is timed."""


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


def _responses(steps: int) -> list[ScriptedResponse]:
    """``steps`` model steps: a call of ``note`` in each but the last, which answers."""
    calls = [ScriptedResponse(tool_calls=[ScriptedToolCall("note", {"text": "a"}, id="n-1")])] * (steps - 1)
    return [*calls, ScriptedResponse(text="All done here.")]


def _racer(make_app: AppFactory, model: ScriptedModel) -> App:
    note = create_tool(id="note", description="Notes a text", execute=_note)
    return make_app([Agent(id="racer", model=model, tools={"note": note})])


async def _ends_stop_then_aborted(app: App, run_id: str) -> None:
    """The journal holds the step's own end, as its activity wrote it, then the abort in a segment of its own."""
    entries = await app.store.read_chunks(run_id, 0, 1000)
    kinds = [entry.chunk["type"] for entry in entries]
    finishes = [e.chunk["payload"]["stepResult"]["reason"] for e in entries if e.chunk["type"] == "finish"]
    assert finishes == ["stop", "aborted"], kinds
    assert kinds[-3:] == ["start", "abort", "finish"], kinds
    assert kinds.count("start") == 2 and kinds.count("abort") == 1, kinds
    assert [e.offset for e in entries] == list(range(len(entries)))


async def _cancelled_through(app: App, message: str, deaf: Deaf) -> str:
    """Start a run of ``racer`` with ``message``; once it is inside ``deaf``, cancel it and, once ``deaf`` was told
    to stop (the workflow took the cancellation), let it complete. The run must end cancelled; its id."""
    async with app.worker():
        stream = await app.agent("racer").stream(message)
        await asyncio.wait_for(deaf.reached.wait(), PATIENCE)
        handle = app.client.get_workflow_handle(stream.run_id)
        await handle.cancel()
        await asyncio.wait_for(deaf.told.wait(), PATIENCE)
        deaf.gate.set()
        with pytest.raises(WorkflowFailureError) as failure:
            await asyncio.wait_for(handle.result(), PATIENCE)
    assert isinstance(failure.value.cause, CancelledError)
    return stream.run_id


@pytest.mark.parametrize("steps", [1, 2], ids=["first-step", "after-a-tool-call"])
async def test_a_cancellation_that_arrives_with_the_last_steps_result_ends_the_journal_with_abort_then_finish(
    make_app: AppFactory, steps: int
) -> None:
    model = GatedModel(_responses(steps), gated=steps - 1)
    app = _racer(make_app, model)
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

    await _ends_stop_then_aborted(app, run_id)


@pytest.mark.parametrize("steps", [1, 2], ids=["first-step", "after-a-tool-call"])
async def test_a_cancellation_the_last_step_completes_through_still_ends_the_run_cancelled(
    make_app: AppFactory, steps: int
) -> None:
    model = DeafModel(_responses(steps), gated=steps - 1)
    app = _racer(make_app, model)
    run_id = await _cancelled_through(app, "finish up", model)  # the last step completes after being told
    handle = app.client.get_workflow_handle(run_id)
    history = [e.event_type for e in (await handle.fetch_history()).events]
    assert history.count(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) >= 2 * steps - 1  # the step did complete
    await _ends_stop_then_aborted(app, run_id)


async def test_a_cancellation_a_tool_call_completes_through_ends_the_run_before_its_next_step(
    make_app: AppFactory,
) -> None:
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("note", {"text": "a"}, id="n-1")]), ScriptedResponse(text="Hi")]
    )
    tool = DeafTool()
    app = make_app(
        [Agent(id="racer", model=model, tools={"note": create_tool(id="note", description="Notes", execute=tool)})]
    )
    run_id = await _cancelled_through(app, "note it", tool)  # the call completes after being told
    entries = await app.store.read_chunks(run_id, 0, 1000)
    kinds = [entry.chunk["type"] for entry in entries]
    assert len(model.requests) == 1, kinds  # no model step after the call
    assert kinds.count("tool-result") == 1 and kinds[-2:] == ["abort", "finish"], kinds
    assert entries[-1].chunk["payload"]["stepResult"]["reason"] == "aborted"
    assert [e.offset for e in entries] == list(range(len(entries)))
