"""The agents tests share: one builder for a scripted agent that makes its calls and then answers (a parent
calling sub-agents, or a child calling tools), the call of a sub-agent, a clerk that waits for a person, a model
whose first attempt of each step drops the connection, and a weather agent for any model."""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic import BaseModel

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelEvent, ModelRequest, TextDelta


def scripted_agent(agent_id: str, calls: Sequence[ScriptedToolCall], answer: str, **agent_args: Any) -> Agent:
    """An agent whose model makes ``calls`` in its first step (in parallel), then answers ``answer``.

    ``agent_args`` are the rest of the ``Agent`` (``agents=`` for a parent, ``tools=`` for a child, ...)."""
    model = ScriptedModel([ScriptedResponse(tool_calls=list(calls)), ScriptedResponse(text=answer)])
    return Agent(id=agent_id, model=model, **agent_args)


def delegate(key: str, prompt: str, call_id: str, **arguments: Any) -> ScriptedToolCall:
    """The model's call of the sub-agent registered under ``key`` (its tool ``agent-<key>``)."""
    return ScriptedToolCall(f"agent-{key}", {"prompt": prompt, **arguments}, id=call_id)


def confirm_tool(seen: list[Any]) -> Any:
    """``confirm``: suspends to ask a person whether to pay ``amount``, then records the answer in ``seen``."""

    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            return await ctx.suspend({"question": f"pay {data['amount']}?"})
        seen.append(ctx.resume_data)
        return {"paid": data["amount"] if ctx.resume_data["ok"] else 0}

    return create_tool(
        id="confirm",
        description="Pays after a person confirms",
        input_schema={"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]},
        resume_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        execute=execute,
    )


def clerk_agent(seen: list[Any]) -> Agent:
    """The sub-agent ``clerk``: asks a person to confirm paying 12 (``{"question": "pay 12?"}``), then answers."""
    return scripted_agent(
        "clerk",
        [ScriptedToolCall("confirm", {"amount": 12}, id="pay")],
        "Paid 12.",
        description="Pays invoices",
        tools={"confirm": confirm_tool(seen)},
    )


class FlakyModel(ScriptedModel):
    """A scripted model whose first attempt of each step fails after its first text delta (the provider dropped the
    connection); the retry streams the step whole. ``attempts`` counts the attempts of each step."""

    def __init__(self, responses: Sequence[ScriptedResponse]) -> None:
        super().__init__(list(responses))
        self.attempts: collections.Counter[int] = collections.Counter()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.attempts[request.step] += 1
        async for event in super().stream(request):
            yield event
            if self.attempts[request.step] == 1 and isinstance(event, TextDelta):
                raise ConnectionError("provider dropped the connection")


class CityIn(BaseModel):
    city: str


async def weather(data: CityIn, ctx: ToolContext) -> dict[str, Any]:
    return {"city": data.city, "sky": "sunny"}


def weather_agent(model: Any, agent_id: str) -> Agent:
    """An agent on ``model`` with one tool, ``weather`` (the sky of a city: always sunny)."""
    tool = create_tool(id="weather-tool", description="Weather for a city", input_schema=CityIn, execute=weather)
    return Agent(id=agent_id, instructions="Answer briefly.", model=model, tools={"weather": tool})
