"""An interrupt stops a run at its next step boundary, keeping what it did: finish reason ``interrupted``, its
messages saved to its thread (the next run on the thread sees them); a run waiting for a person stops at once."""

from __future__ import annotations

import asyncio
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, closed_history, running_worker

MEMORY = {"thread": "t-interrupt", "resource": "u-1"}


def _tool_results(request: ModelRequest) -> list[Any]:
    return [part.result for message in request.messages for part in message.tool_results]


async def test_an_interrupt_mid_run_stops_at_the_next_step_boundary_and_keeps_what_the_run_did(
    make_app: AppFactory,
) -> None:
    reached, release = asyncio.Event(), asyncio.Event()

    async def slow_lookup(data: dict[str, Any]) -> str:
        reached.set()
        await release.wait()
        return f"found {data['q']}"

    def script(request: ModelRequest) -> ScriptedResponse:
        if any(m.role == "user" and m.text == "What did you find?" for m in request.messages):
            return ScriptedResponse(text="I had found x.")
        return ScriptedResponse(text=f"Step {request.step}.", tool_calls=[ScriptedToolCall("lookup", {"q": "x"})])

    model = ScriptedModel(script)
    lookup = create_tool(id="lookup", description="Looks up", execute=slow_lookup)
    app = make_app(
        [Agent(id="i", model=model, tools={"lookup": lookup})],
    )
    async with running_worker(app):
        stream = await app.stream("i", "Look it up, again and again", memory=MEMORY, max_steps=10)
        await reached.wait()
        await app.interrupt(stream.run_id, by_run_id="run-next")
        release.set()  # the running tool call ends; no model step follows
        result = await stream.result()
        outcome = RunResult.model_validate(await app.client.get_workflow_handle(stream.run_id).result())
        after = await app.generate("i", "What did you find?", memory=MEMORY)

    assert result.finish_reason == "interrupted"
    assert outcome.finish_reason == "interrupted"
    assert outcome.steps == 1
    assert len(model.requests) == 2  # the interrupted run's one step, then the next run's
    journal = [entry.chunk for entry in await app.store.read_chunks(stream.run_id)]
    types = [chunk["type"] for chunk in journal]
    assert types[-3:] == ["data-interrupted", "step-finish", "finish"]
    assert journal[-3]["data"] == {"byRunId": "run-next", "requestedBy": None, "steps": 1}
    assert journal[-1]["payload"]["stepResult"]["reason"] == "interrupted"
    assert types.count("tool-result") == 1
    thread = await app.store.get_thread_messages("t-interrupt", "u-1")
    assert [m["role"] for m in thread] == ["user", "assistant", "tool", "user", "assistant"]
    assert after.text == "I had found x."
    assert _tool_results(model.requests[1]) == ["found x"]
    history = await closed_history(app.client, stream.run_id)
    assert sum(1 for e in history.events if e.activity_task_scheduled_event_attributes.activity_type.name) == 3


async def test_an_interrupt_while_the_run_waits_stops_it_at_once(make_app: AppFactory) -> None:
    def script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0 and request.messages[-1].text == "Delete a":
            return ScriptedResponse(tool_calls=[ScriptedToolCall("delete", {"path": "a"}, id="del-a")])
        return ScriptedResponse(text="Understood.")

    model = ScriptedModel(script)
    delete = create_tool(id="delete", description="Deletes", execute=lambda d: "deleted", require_approval=True)
    app = make_app([Agent(id="d", model=model, tools={"delete": delete})])
    async with running_worker(app):
        first = await app.generate("d", "Delete a", memory=MEMORY)
        assert first.finish_reason == "suspended"
        assert [r.run_id for r in (await app.list_suspended_runs()).runs] == [first.run_id]
        await app.interrupt(first.run_id)
        outcome = RunResult.model_validate(await app.client.get_workflow_handle(first.run_id).result())
        waiting = await app.list_suspended_runs()
        after = await app.generate("d", "Never mind", memory=MEMORY)

    assert outcome.finish_reason == "interrupted"
    assert waiting.runs == []
    journal = [entry.chunk for entry in await app.store.read_chunks(first.run_id)]
    types = [chunk["type"] for chunk in journal]
    suspended_finish = types.index("finish")
    assert types[suspended_finish + 1 :] == ["start", "tool-error", "data-interrupted", "finish"]
    assert journal[-1]["payload"]["stepResult"]["reason"] == "interrupted"
    assert "interrupted" in journal[-3]["payload"]["error"]
    assert after.text == "Understood."
    errors = [p for m in model.requests[-1].messages for p in m.tool_results if p.is_error]
    assert [(p.tool_call_id, "interrupted" in str(p.result)) for p in errors] == [("del-a", True)]
