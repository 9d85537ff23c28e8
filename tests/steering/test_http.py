"""The HTTP routes: ``POST /api/runs/{runId}/steer``, ``/interrupt`` and ``/rollback``, under the bearer tokens, with
the token's principal recorded as who sent the steer or asked for the interrupt."""

from __future__ import annotations

import asyncio
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served

TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}
ALICE = {"Authorization": "Bearer tok-alice"}
BOB = {"Authorization": "Bearer tok-bob"}
MEMORY = {"thread": "t-http", "resource": "u-1"}


async def test_steer_interrupt_and_rollback_over_http(make_app: AppFactory) -> None:
    reached, release = asyncio.Event(), asyncio.Event()

    async def slow_lookup(data: dict[str, Any]) -> str:
        reached.set()
        await release.wait()
        return "found"

    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text == "Look it up":
            return ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {})])
        if last.role == "user" and last.text == "Delete it":
            return ScriptedResponse(tool_calls=[ScriptedToolCall("delete", {})])
        return ScriptedResponse(text=f"Seen: {[m.text for m in request.messages if m.role == 'user']}")

    tools = {
        "lookup": create_tool(id="lookup", description="Looks up", execute=slow_lookup),
        "delete": create_tool(id="delete", description="Deletes", execute=lambda d: "gone", require_approval=True),
    }
    model = ScriptedModel(script)
    app = make_app([Agent(id="h", model=model, tools=tools)])
    async with served(app, tokens=TOKENS) as http, running_worker(app):
        stream = await app.stream("h", "Look it up", memory=MEMORY)
        await reached.wait()
        url = f"/runs/{stream.run_id}/steer"
        assert (await http.post(url, json={"message": "x"})).status_code == 401
        assert (await http.post(url, json={"message": []}, headers=ALICE)).status_code == 400
        steering = asyncio.create_task(http.post(url, json={"message": "Be brief"}, headers=ALICE))
        handle = app.client.get_workflow_handle(stream.run_id)
        while await handle.query(AgentRunWorkflow.steers_received) < 1:
            await asyncio.sleep(0.02)
        release.set()
        steered = await steering
        await stream.result()
        await handle.result()
        late = await http.post(url, json={"message": "Too late"}, headers=ALICE)
        missing = await http.post("/runs/no-such-run/steer", json={"message": "Hi"}, headers=ALICE)

        waiting = await app.generate("h", "Delete it", memory=MEMORY)
        interrupted = await http.post(f"/runs/{waiting.run_id}/interrupt", headers=BOB)
        outcome = RunResult.model_validate(await app.client.get_workflow_handle(waiting.run_id).result())
        rolled_back = await http.post(f"/runs/{waiting.run_id}/rollback", headers=BOB)
        after = await app.generate("h", "Anything else?", memory=MEMORY)

    assert steered.status_code == 200, steered.text
    assert steered.json() == {"runId": stream.run_id, "position": 1, "status": "delivered", "step": 1}
    journal = [entry.chunk for entry in await app.store.read_chunks(stream.run_id)]
    steer = next(c for c in journal if c["type"] == "data-user-message")
    assert (steer["data"]["sentBy"], steer["data"]["text"]) == ("alice", "Be brief")
    assert late.status_code == 409
    assert late.json()["code"] == "RUN_FINISHED" and late.json()["runId"] == stream.run_id
    assert missing.status_code == 404

    assert (interrupted.status_code, interrupted.json()) == (202, {"runId": waiting.run_id, "interruptRequested": True})
    assert outcome.finish_reason == "interrupted"
    interrupt_chunk = next(
        e.chunk for e in await app.store.read_chunks(waiting.run_id) if e.chunk["type"] == "data-interrupted"
    )
    assert interrupt_chunk["data"]["requestedBy"] == "bob"
    assert rolled_back.status_code == 200
    assert rolled_back.json() == {
        "runId": waiting.run_id,
        "status": "COMPLETED",
        "threadId": "t-http",
        "resourceId": "u-1",
        "removedMessages": 3,
    }
    assert after.text == "Seen: ['Look it up', 'Be brief', 'Anything else?']"
