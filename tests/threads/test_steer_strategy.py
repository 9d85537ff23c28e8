"""``steer`` on a busy thread: the message goes into the active run (no run of its own), which the model reads at
its next step, journaled as a user message naming its sender; on an idle thread it starts a run as usual."""

from __future__ import annotations

import asyncio
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker

MEMORY = {"thread": "t-steer", "resource": "u1"}


def working_agent(gate: asyncio.Event) -> Agent:
    async def work(data: dict[str, Any], ctx: ToolContext) -> str:
        await gate.wait()
        return "done"

    def script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("work", {}, id="w")])
        return ScriptedResponse(text=" | ".join(m.text for m in request.messages if m.role == "user"))

    tool = create_tool(id="work", description="Works until released", execute=work)
    return Agent(id="worker", model=ScriptedModel(script), tools={"work": tool})


async def test_a_steered_message_goes_into_the_active_run(make_app: AppFactory) -> None:
    gate = asyncio.Event()
    app = make_app([working_agent(gate)])
    async with running_worker(app):
        first = await app.stream("worker", "Plan the trip", memory=MEMORY)
        steered = await app.stream(
            "worker", "Only trains, please", memory=MEMORY, thread_strategy="steer", sent_by="alice"
        )
        assert steered.thread_outcome is not None
        assert steered.thread_outcome.outcome == "steered"
        assert steered.run_id == first.run_id
        gate.set()
        result = await first.result()
        assert result.text == "Plan the trip | Only trains, please"
        chunks = [c for c in result.chunks if c.type == "data-user-message"]
        assert len(chunks) == 1 and "alice" in str(chunks[0].model_dump())
        view = await app.thread("t-steer", resource_id="u1")
        assert [r.run_id for r in view.done + view.active] == [first.run_id]  # no run of its own
