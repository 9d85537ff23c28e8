"""The demo app: an ``assistant`` agent with two tools, on a scripted model (no network, no keys).

``tempo-agents demo`` runs it end to end. It is also an ordinary app module::

    tempo-agents worker --app examples.demo_app:app --address localhost:7233
    tempo-agents run assistant "What's the weather in Oslo, and 250 NOK in EUR?" --app examples.demo_app:app

Step 1 of every run says a sentence and calls ``get_weather`` and ``convert_currency`` in
parallel; step 2 answers from their results, which the model reads back from the transcript.
Both tools are real functions whose results are deterministic.
"""

from __future__ import annotations

import asyncio
import re
import zlib

from pydantic import BaseModel, Field

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models import ModelRequest
from tempo_agents.store.url import DEFAULT_STORE_URL

DEMO_PROMPT = "What's the weather in Lisbon, and how much is 120 EUR in USD?"

# Tools ----------------------------------------------------------------------------------------


class WeatherIn(BaseModel):
    city: str = Field(description="City name, e.g. Lisbon")


class WeatherOut(BaseModel):
    city: str
    temperature_c: float
    conditions: str
    humidity_pct: int


_CONDITIONS = ("sunny", "partly cloudy", "overcast", "light rain", "windy", "clear")


async def get_weather(data: WeatherIn, context: ToolContext) -> WeatherOut:
    """A made-up but stable forecast: the same city always gets the same weather."""
    seed = zlib.crc32(data.city.strip().lower().encode())
    await asyncio.sleep(0.05)
    return WeatherOut(
        city=data.city.strip().title(),
        temperature_c=round(8 + (seed % 230) / 10, 1),
        conditions=_CONDITIONS[seed % len(_CONDITIONS)],
        humidity_pct=35 + seed % 50,
    )


class ConvertIn(BaseModel):
    amount: float = Field(gt=0, description="Amount of money to convert")
    source: str = Field(min_length=3, max_length=3, description="ISO code of the currency to convert from")
    target: str = Field(min_length=3, max_length=3, description="ISO code of the currency to convert to")


_USD_PER_UNIT = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27, "JPY": 0.0067, "CHF": 1.13, "NOK": 0.094, "SEK": 0.095}


async def convert_currency(data: ConvertIn, context: ToolContext) -> dict[str, object]:
    """Converts with a fixed rate table, streaming its progress to the run."""
    source, target = data.source.upper(), data.target.upper()
    await context.writer.write({"status": "loading rates", "pair": f"{source}/{target}"})
    await asyncio.sleep(0.05)
    if source not in _USD_PER_UNIT or target not in _USD_PER_UNIT:
        known = ", ".join(sorted(_USD_PER_UNIT))
        raise ValueError(f"unknown currency in {source}/{target}; known: {known}")
    rate = _USD_PER_UNIT[source] / _USD_PER_UNIT[target]
    await context.writer.write({"status": "converting", "rate": round(rate, 6)})
    return {
        "amount": data.amount,
        "source": source,
        "target": target,
        "rate": round(rate, 6),
        "converted": round(data.amount * rate, 2),
    }


# Scripted model -------------------------------------------------------------------------------

_CITY = re.compile(r"\b(?:in|at|for)\s+([A-Z][a-zA-Z-]+(?:\s[A-Z][a-zA-Z-]+)?)")
_MONEY = re.compile(r"(\d+(?:\.\d+)?)\s*([A-Za-z]{3})\s+(?:in|to|into)\s+([A-Za-z]{3})\b")


def _plan(prompt: str) -> ScriptedResponse:
    city_match = _CITY.search(prompt)
    money_match = _MONEY.search(prompt)
    city = city_match.group(1) if city_match else "Lisbon"
    amount, source, target = (
        (float(money_match.group(1)), money_match.group(2).upper(), money_match.group(3).upper())
        if money_match
        else (120.0, "EUR", "USD")
    )
    return ScriptedResponse(
        text=f"Let me check the weather in {city} and convert {amount:g} {source} to {target} at the same time.",
        tool_calls=[
            ScriptedToolCall("get_weather", {"city": city}),
            ScriptedToolCall("convert_currency", {"amount": amount, "source": source, "target": target}),
        ],
    )


def _answer(request: ModelRequest) -> ScriptedResponse:
    results = {part.tool_name: part for message in request.messages for part in message.tool_results}
    sentences: list[str] = []
    weather = results.get("get_weather")
    if weather is not None and not weather.is_error and isinstance(weather.result, dict):
        w = weather.result
        sentences.append(
            f"In {w['city']} it is {w['temperature_c']} °C and {w['conditions']}, with {w['humidity_pct']}% humidity."
        )
    elif weather is not None:
        sentences.append(f"I could not get the weather: {weather.result}.")
    money = results.get("convert_currency")
    if money is not None and not money.is_error and isinstance(money.result, dict):
        m = money.result
        sentences.append(f"{m['amount']:g} {m['source']} is {m['converted']:.2f} {m['target']} (rate {m['rate']:g}).")
    elif money is not None:
        sentences.append(f"I could not convert the money: {money.result}.")
    return ScriptedResponse(text=" ".join(sentences) or "I have nothing to report.")


def script(request: ModelRequest) -> ScriptedResponse:
    """Plan and call the tools first; once their results are in the transcript, answer from them."""
    if any(message.role == "tool" for message in request.messages):
        return _answer(request)
    prompt = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
    return _plan(prompt)


# App ------------------------------------------------------------------------------------------


def create_app(store: str = DEFAULT_STORE_URL, task_queue: str = "tempo-agents") -> App:
    """A fresh App with the ``assistant`` agent (each call builds new agents and tools)."""
    weather_tool = create_tool(
        id="get-weather",
        description="Current weather for a city",
        input_schema=WeatherIn,
        output_schema=WeatherOut,
        execute=get_weather,
    )
    currency_tool = create_tool(
        id="convert-currency",
        description="Convert an amount of money between two currencies",
        input_schema=ConvertIn,
        execute=convert_currency,
    )
    assistant = Agent(
        id="assistant",
        name="Assistant",
        instructions="You are a helpful assistant. Use the tools for weather and currency questions.",
        model=ScriptedModel(script, model_id="demo-script", delta_delay=0.02),
        tools={"get_weather": weather_tool, "convert_currency": currency_tool},
    )
    return App(agents=[assistant], store=store, task_queue=task_queue)


app = create_app()
