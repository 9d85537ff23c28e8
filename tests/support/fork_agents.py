"""What the fork tests share: a model that answers by the turn of the conversation it is shown (as a real model
would, so a fork's copied steps count), and a tool that counts its executions (its side effect)."""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest


def by_turn(responses: Sequence[ScriptedResponse]) -> ScriptedModel:
    """A model that answers by how many assistant messages it was shown (a fork's copied steps count, as they would
    for a real model), not by the run's step number."""

    def respond(request: ModelRequest) -> ScriptedResponse:
        return responses[sum(1 for message in request.messages if message.role == "assistant")]

    return ScriptedModel(respond)


def lookup_tool(executed: collections.Counter[str]) -> Any:
    """``lookup``: the weather of a city; ``executed`` counts its executions by city (its side effect)."""

    async def execute(data: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        executed[data["city"]] += 1
        return {"city": data["city"], "sky": "clear" if data["city"] != "Oslo" else "snow"}

    return create_tool(
        id="lookup",
        description="Weather of a city",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        execute=execute,
    )


def call(city: str, call_id: str) -> ScriptedToolCall:
    return ScriptedToolCall("lookup", {"city": city}, id=call_id)


def travel_agents(executed: collections.Counter[str]) -> list[Agent]:
    """``travel`` (Paris, then Rome, then done) and ``travel-v2``, the same first step then Oslo: the agents a fork
    moves between. Both call ``lookup``, which counts its executions in ``executed``."""
    tools = {"lookup": lookup_tool(executed)}
    first = ScriptedResponse(text="Paris first.", tool_calls=[call("Paris", "c1")])
    responses = [
        first,
        ScriptedResponse(text="And Rome.", tool_calls=[call("Rome", "c2")]),
        ScriptedResponse(text="All clear."),
    ]
    edited = [
        first,
        ScriptedResponse(text="And Oslo.", tool_calls=[call("Oslo", "c2")]),
        ScriptedResponse(text="Snow in Oslo."),
    ]
    return [
        Agent(id="travel", model=by_turn(responses), tools=tools),
        Agent(id="travel-v2", model=by_turn(edited), tools=tools),
    ]
