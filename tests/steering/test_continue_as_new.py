"""Steers outlive continue-as-new: a steer queued when the run continues as new is carried into the next run of the
workflow and delivered at its first model step; positions keep counting; none is lost or doubled."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import continue_as_new_server, running_worker


async def test_a_steer_queued_at_continue_as_new_is_carried_into_the_next_run(tmp_path: Path) -> None:
    steps = 8
    reached = [asyncio.Event() for _ in range(steps)]
    release = [asyncio.Event() for _ in range(steps)]

    async def hold(data: dict[str, Any]) -> str:
        reached[data["n"]].set()
        await release[data["n"]].wait()
        return f"held {data['n']}"

    def script(request: ModelRequest) -> ScriptedResponse:
        if request.step < steps - 1:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("hold", {"n": request.step})])
        return ScriptedResponse(text="end")

    model = ScriptedModel(script)
    async with continue_as_new_server(30) as env:
        app = App(
            agents=[
                Agent(id="can", model=model, tools={"hold": create_tool(id="hold", description="Holds", execute=hold)})
            ],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with running_worker(app):
            stream = await app.stream("can", "go", max_steps=steps)
            handle = app.client.get_workflow_handle(stream.run_id)
            accepted = []
            for n in range(steps - 1):  # a steer while each step's tool runs
                await reached[n].wait()
                steering = asyncio.create_task(app.steer(stream.run_id, f"note {n}"))
                while await handle.query(AgentRunWorkflow.steers_received) < n + 1:
                    await asyncio.sleep(0.02)
                release[n].set()
                accepted.append(await steering)
            outcome = RunResult.model_validate(await handle.result())
            runs = [w async for w in app.client.list_workflows(f"WorkflowId = '{stream.run_id}'")]

    assert len(runs) >= 2, "the run should have continued as new"
    assert outcome.steps == steps and outcome.undelivered_steers == []
    assert [a.position for a in accepted] == list(range(1, steps))
    kept = [a for a in accepted if a.status == "kept"]
    assert len(kept) == len(runs) - 1  # one steer waited at each continue-as-new, and was carried
    assert all(a.step == n + 1 for n, a in enumerate(accepted) if a.status == "delivered")
    for n in range(steps - 1):  # every step after the first saw exactly the steers sent so far, in order
        users = [m.text for m in model.requests[n + 1].messages if m.role == "user"]
        assert users == ["go", *[f"note {k}" for k in range(n + 1)]]
    journal = [e.chunk for e in await app.store.read_chunks(stream.run_id)]
    steers = [(c["data"]["position"], c["data"]["step"]) for c in journal if c["type"] == "data-user-message"]
    assert steers == [(n + 1, n + 1) for n in range(steps - 1)]
