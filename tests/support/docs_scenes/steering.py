"""The setting of "Steering, interrupting and rolling back a run": a run on a memory thread that is still working
(its model checks the forecast step after step, each check taking a second). The block's steer must reach the
model at a step, its interrupt must reach the run, and its rollback must cancel the run and take its messages off
the thread."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.steering import INTERRUPT
from tests.support.docs_scenes.scene import Names, served_app

__all__ = ["working_run"]

MEMORY = {"thread": "forecasts", "resource": "acme"}
STEPS = 60
"""The steps the model would take if nothing stopped the run (a minute of work)."""


def _checks_again(request: ModelRequest) -> ScriptedResponse:
    if request.step >= STEPS:
        return ScriptedResponse(text="Done checking.")
    call = ScriptedToolCall("forecast", {"city": "Oslo"}, id=f"call-{request.step}")
    return ScriptedResponse(text=f"Check {request.step}.", tool_calls=[call])


@asynccontextmanager
async def working_run(names: Names, address: str) -> AsyncIterator[None]:
    working = asyncio.Event()

    async def forecast(data: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        working.set()
        await asyncio.sleep(1)
        return {"city": data["city"], "degrees": 21}

    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    tool = create_tool(id="forecast", description="Forecast for a city", input_schema=schema, execute=forecast)
    model = ScriptedModel(_checks_again)
    async with served_app(address, [Agent(id="weather", model=model, tools={"forecast": tool})]) as app:
        stream = await app.stream("weather", "Watch the weather in Oslo", memory=MEMORY)
        await working.wait()
        names.update(app=app, run_id=stream.run_id)
        yield
        accepted, done = names["accepted"], names["done"]
        assert accepted.status == "delivered"
        [read] = [request for request in model.requests if request.step == accepted.step]
        assert [message.text for message in read.messages if message.role == "user"][-1] == "Answer in Celsius"
        history = await app.client.get_workflow_handle(stream.run_id).fetch_history()
        signals = [event.workflow_execution_signaled_event_attributes.signal_name for event in history.events]
        assert INTERRUPT in signals
        assert (done.status, done.thread_id) == ("CANCELED", MEMORY["thread"]) and done.removed_messages > 0
        assert await app.store.get_thread_messages(MEMORY["thread"], MEMORY["resource"]) == []
        journal = await app.store.read_chunks(stream.run_id, 0, 100_000)
        assert journal[-1].chunk["type"] == "data-rolled-back"
