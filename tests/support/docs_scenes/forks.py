"""The setting of "Time travel": a travel agent's run that happened (forecast, then a hotel booked, then "Rome is
sunny."), a run that failed at its second step before a fix, and ``travel-v2``, whose instructions make the model
check the forecast again. The block's fork must answer from the original's forecast and book again, its retry
must end the failed run's work, and compare and the forks listing must name the fork."""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import ModelRequest
from tempo_agents.tools import Tool
from tests.support.docs_scenes.scene import Names, served_app
from tests.support.polling import until

__all__ = ["runs_that_happened"]

Executed = collections.Counter[tuple[str, str]]
"""How many times each tool ran for each city: the side effects a reused call must not repeat."""


def _city_tool(tool_id: str, executed: Executed) -> Tool:
    async def execute(data: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        executed[tool_id, data["city"]] += 1
        return {"city": data["city"], "forecast": "rain"} if tool_id == "forecast" else {"booked": data["city"]}

    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    return create_tool(id=tool_id, description=f"{tool_id} for a city", input_schema=schema, execute=execute)


def _calls(step: int, *tool_ids: str, city: str) -> list[ScriptedToolCall]:
    return [ScriptedToolCall(tool_id, {"city": city}, id=f"{tool_id}-{step}") for tool_id in tool_ids]


def _travel(broken: list[bool], *, careful: bool) -> Callable[[ModelRequest], ScriptedResponse]:
    """The model of ``travel`` (or of ``travel-v2``, ``careful``), answering by the turn of the conversation it is
    shown (a fork's copied steps count) for the city its input names; its second step fails while ``broken``."""

    def respond(request: ModelRequest) -> ScriptedResponse:
        turn = sum(1 for message in request.messages if message.role == "assistant")
        said = " ".join(message.text for message in request.messages if message.role == "user")
        city = "Paris" if "Paris" in said else "Rome"
        if turn == 0:
            return ScriptedResponse(tool_calls=_calls(0, "forecast", city=city))
        if turn == 1 and broken:
            raise ConfigurationError("the hotel tool's prompt template is broken")
        if turn == 1:
            return ScriptedResponse(tool_calls=_calls(1, "book_hotel", city=city))
        if careful and turn == 2:
            return ScriptedResponse(tool_calls=_calls(2, "forecast", "book_hotel", city=city))
        return ScriptedResponse(text=f"{city} will see rain; take an umbrella." if careful else f"{city} is sunny.")

    return respond


async def _only(listed: Awaitable[list[str]], run_id: str) -> bool:
    """Whether the forks listed are ``run_id`` alone (visibility lists a new run a moment after it starts)."""
    return await listed == [run_id]


@asynccontextmanager
async def runs_that_happened(names: Names, address: str) -> AsyncIterator[None]:
    executed: Executed = collections.Counter()
    broken = [True]
    tools = {tool_id: _city_tool(tool_id, executed) for tool_id in ("forecast", "book_hotel")}
    agents = [
        Agent(id="travel", model=ScriptedModel(_travel(broken, careful=False)), tools=tools),
        Agent(id="travel-v2", model=ScriptedModel(_travel(broken, careful=True)), tools=tools),
    ]
    async with served_app(address, agents) as app:
        failed = await app.generate("travel", "Book me a hotel in Paris")
        assert failed.error is not None
        broken.clear()  # the fix, deployed
        original = await app.generate("travel", "Book me a hotel in Rome")
        assert original.text == "Rome is sunny."
        names.update(app=app, run_id=original.run_id, failed_run_id=failed.run_id)
        yield
        fork_id = names["fork"].run_id
        assert names["result"].text == "Rome will see rain; take an umbrella."
        assert names["diff"]["firstDifferentStep"] == 2
        retried = await names["retry"].result()
        assert retried.text == "Paris is sunny."
        assert names["forks"] == [fork_id] or await until(lambda: _only(app.list_forks(original.run_id), fork_id))
    # the fork's forecast answered from the original's; its booking, named in rerun, ran again
    assert executed == {
        ("forecast", "Rome"): 1,
        ("book_hotel", "Rome"): 2,
        ("forecast", "Paris"): 1,
        ("book_hotel", "Paris"): 1,
    }
