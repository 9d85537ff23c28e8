"""An App that mirrors the reference server used to capture the HTTP protocol.

Same agent id (``assistant``), tool ids (``weather-tool``, ``confirm-tool``, ``danger-tool``,
``boom-tool``) and tool keys, and a scripted model that reacts to the last user message:

* "weather": calls ``weather`` for Oslo, then answers with the result;
* "streamargs": calls ``weather`` for Bergen (arguments streamed; the tool writes a ``data-progress`` chunk);
* "charge": calls ``confirm``, which suspends until resumed with ``{"confirmed": true|false}``;
* "delete": calls ``danger``, which needs approval;
* "explode": calls ``boom``, which raises;
* "modelerror": the model itself fails;
* anything else: "Hello there."

Serve it with ``tempo-agents dev --app examples/reference_parity.py:app``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.errors import ModelError
from tempo_agents.models.model import ModelRequest
from tempo_agents.models.usage import Usage


class CityIn(BaseModel):
    city: str


class Weather(BaseModel):
    city: str
    temperature: float


class AmountIn(BaseModel):
    amount: float


class ConfirmPrompt(BaseModel):
    phase: str
    amount: float


class ConfirmAnswer(BaseModel):
    confirmed: bool


class PathIn(BaseModel):
    path: str


class NoInput(BaseModel):
    pass


async def look_up_weather(data: CityIn, ctx: ToolContext) -> dict[str, Any]:
    await ctx.writer.write({"progress": f"looking up {data.city}"})
    if data.city == "Bergen":
        await ctx.writer.custom({"type": "data-progress", "data": {"pct": 50}})
    return {"city": data.city, "temperature": 21}


async def charge(data: AmountIn, ctx: ToolContext) -> dict[str, Any] | None:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        await ctx.suspend({"phase": "confirm", "amount": data.amount})
        return None
    return {"charged": data.amount if ctx.resume_data.get("confirmed") else 0}


def delete_file(data: PathIn) -> dict[str, Any]:
    return {"deleted": data.path}


def always_fail(data: NoInput) -> None:
    raise RuntimeError("boom failed")


weather = create_tool(
    id="weather-tool",
    description="Weather for a city",
    input_schema=CityIn,
    output_schema=Weather,
    execute=look_up_weather,
)
confirm = create_tool(
    id="confirm-tool",
    description="Charges an amount after human confirmation",
    input_schema=AmountIn,
    suspend_schema=ConfirmPrompt,
    resume_schema=ConfirmAnswer,
    execute=charge,
)
danger = create_tool(
    id="danger-tool",
    description="Deletes a file (needs approval)",
    input_schema=PathIn,
    require_approval=True,
    execute=delete_file,
)
boom = create_tool(id="boom-tool", description="Always throws", input_schema=NoInput, execute=always_fail)

_USAGE = Usage(input_tokens=10, output_tokens=5, total_tokens=15)

_REACTIONS: list[tuple[str, ScriptedResponse]] = [
    ("streamargs", ScriptedResponse(tool_calls=[ScriptedToolCall("weather", {"city": "Bergen"}, id="call-w2")])),
    (
        "weather",
        ScriptedResponse(
            text="Let me check.", tool_calls=[ScriptedToolCall("weather", {"city": "Oslo"}, id="call-w1")]
        ),
    ),
    (
        "charge",
        ScriptedResponse(text="Charging.", tool_calls=[ScriptedToolCall("confirm", {"amount": 990}, id="call-c1")]),
    ),
    ("explode", ScriptedResponse(tool_calls=[ScriptedToolCall("boom", {}, id="call-b1")])),
    (
        "delete",
        ScriptedResponse(
            text="Deleting.", tool_calls=[ScriptedToolCall("danger", {"path": "notes/x.txt"}, id="call-d1")]
        ),
    ),
]


def react(request: ModelRequest) -> ScriptedResponse:
    """The model's next step, chosen from the conversation so far."""
    last = request.messages[-1] if request.messages else None
    if last is not None and last.role == "tool":
        results = [part.result for part in last.tool_results]
        return ScriptedResponse(text=f"Done: {json.dumps(results)}", usage=_USAGE)
    said = next((m.text for m in reversed(request.messages) if m.role == "user"), "").lower()
    if "modelerror" in said:
        raise ModelError("model exploded", retryable=False, provider="scripted", model="scripted")
    for word, response in _REACTIONS:
        if word in said:
            return ScriptedResponse(text=response.text, tool_calls=response.tool_calls, usage=_USAGE)
    return ScriptedResponse(text="Hello there.", usage=_USAGE)


def build_assistant(**overrides: Any) -> Agent:
    """The ``assistant`` agent (a new one per App: an agent belongs to one App)."""
    options: dict[str, Any] = {
        "id": "assistant",
        "name": "Assistant",
        "description": "Scripted test agent",
        "instructions": "You answer weather questions.",
        "model": ScriptedModel(react),
        "tools": {"weather": weather, "confirm": confirm, "danger": danger, "boom": boom},
    }
    return Agent(**{**options, **overrides})


app = App(agents=[build_assistant()], tools=[weather, confirm, danger])
