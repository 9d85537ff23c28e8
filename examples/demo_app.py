"""The demo app: a ``planner`` that plans, waits for approval, switches mode and works through a task list.

Everything runs on a scripted model (no network, no keys). ``tempo-agents demo`` runs it end to end::

    tempo-agents demo              # asks "Approve this plan? [y/N]" at the terminal
    tempo-agents demo --approve    # approves without asking
    tempo-agents demo --reject --feedback "Add a museum"

A run of ``planner`` starts in mode ``plan``, where it may only write plan files and submit them:

1. it writes ``.plans/<city>-weekend.md`` with ``write_file`` (a tool of this app, executed on the
   worker, that writes only inside ``.plans/`` under the project root: ``TEMPO_AGENTS_PROJECT_ROOT``
   or the worker's working directory);
2. it calls the built-in ``submit_plan`` with that path: the worker reads the file, and the run suspends
   with ``{path, title, plan}`` until someone resumes it with ``{"action": "approved", ...}`` or
   ``{"action": "rejected", "feedback": ...}``;
3. approval switches the run to mode ``build`` (a ``data-mode`` chunk), where it records three tasks with
   ``task_write`` and works through them with ``get_weather``, ``convert_currency``, ``task_update`` and
   ``task_complete`` (each change is a ``data-task-updated`` chunk), then answers;
4. a rejection keeps the run in mode ``plan``: it says so and finishes.

The task tools need a memory thread: start runs with ``memory={"thread": ..., "resource": ...}``.
The app also keeps the earlier single-step ``assistant`` agent (two tools called in parallel)::

    tempo-agents worker --app examples.demo_app:app --address localhost:7233
    tempo-agents run assistant "What's the weather in Oslo, and 250 NOK in EUR?" --app examples.demo_app:app
"""

from __future__ import annotations

import asyncio
import re
import zlib
from pathlib import Path

from pydantic import BaseModel, Field

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.agent.modes import AgentMode
from tempo_agents.models import ModelRequest
from tempo_agents.models.messages import ToolResultPart
from tempo_agents.signals import TaskSignalProvider
from tempo_agents.store.url import DEFAULT_STORE_URL
from tempo_agents.tools import submit_plan_tool
from tempo_agents.tools.builtin.submit_plan import DEFAULT_PLANS_DIR, project_root

DEMO_AGENT = "planner"
DEMO_PROMPT = "Plan a weekend in Lisbon on a 120 EUR budget, priced in USD, then carry the plan out."
ASSISTANT_PROMPT = "What's the weather in Lisbon, and how much is 120 EUR in USD?"
MAX_STEPS = 12
"""The planner's runs take 7 steps (2 in plan mode, 5 in build mode); a little headroom."""

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


class WriteFileIn(BaseModel):
    path: str = Field(description=f"Where to write, relative to the project root; only inside {DEFAULT_PLANS_DIR}/")
    content: str = Field(description="The whole file content (UTF-8 text)")


_MAX_FILE_BYTES = 64 * 1024


def plans_file(path: str, root: Path | None = None) -> Path:
    """The file ``path`` names if it lies directly inside ``.plans/`` under the project root; else ``ValueError``."""
    base = (root or project_root()).resolve()
    folder = base / DEFAULT_PLANS_DIR
    candidate = Path(path)
    if candidate.is_absolute() or ".." in candidate.parts:
        raise ValueError(f"{path}: give a path relative to the project root, without '..'")
    target = (base / candidate).resolve()
    if target.parent != folder.resolve():
        raise ValueError(f"{path}: this tool only writes files directly inside {DEFAULT_PLANS_DIR}/")
    return target


async def write_file(data: WriteFileIn, context: ToolContext) -> dict[str, object]:
    """Writes a file inside ``.plans/`` on the worker (the directory is created when missing)."""
    encoded = data.content.encode()
    if len(encoded) > _MAX_FILE_BYTES:
        raise ValueError(f"{data.path}: {len(encoded)} bytes is more than this tool writes ({_MAX_FILE_BYTES})")
    target = plans_file(data.path)
    await context.writer.write({"status": "writing", "path": data.path, "bytes": len(encoded)})
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(encoded)
    return {"path": data.path, "bytes": len(encoded)}


# Scripted models ------------------------------------------------------------------------------

_CITY = re.compile(r"\b(?:in|at|for)\s+([A-Z][a-zA-Z-]+(?:\s[A-Z][a-zA-Z-]+)?)")
_MONEY = re.compile(r"(\d+(?:\.\d+)?)\s*([A-Za-z]{3})\s+(?:in|to|into)\s+([A-Za-z]{3})\b")
_BUDGET = re.compile(r"(\d+(?:\.\d+)?)\s*([A-Z]{3})\b")
_PRICED_IN = re.compile(r"\b(?:priced|shown|quoted)\s+in\s+([A-Z]{3})\b")


def _prompt(request: ModelRequest) -> str:
    return next((m.text for m in reversed(request.messages) if m.role == "user"), "")


def _results(request: ModelRequest) -> list[ToolResultPart]:
    return [part for message in request.messages if message.role == "tool" for part in message.tool_results]


def _weather_sentence(weather: ToolResultPart | None) -> str:
    if weather is not None and not weather.is_error and isinstance(weather.result, dict):
        w = weather.result
        return (
            f"In {w['city']} it is {w['temperature_c']} °C and {w['conditions']}, with {w['humidity_pct']}% humidity."
        )
    return f"I could not get the weather: {weather.result}." if weather is not None else ""


def _money_sentence(money: ToolResultPart | None) -> str:
    if money is not None and not money.is_error and isinstance(money.result, dict):
        m = money.result
        return f"{m['amount']:g} {m['source']} is {m['converted']:.2f} {m['target']} (rate {m['rate']:g})."
    return f"I could not convert the money: {money.result}." if money is not None else ""


# The assistant: both tools in parallel, then an answer from their results.


def _assistant_calls(prompt: str) -> ScriptedResponse:
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


def script(request: ModelRequest) -> ScriptedResponse:
    """The assistant: call the tools first; once their results are in the transcript, answer from them."""
    if any(message.role == "tool" for message in request.messages):
        by_name = {part.tool_name: part for part in _results(request)}
        sentences = [_weather_sentence(by_name.get("get_weather")), _money_sentence(by_name.get("convert_currency"))]
        return ScriptedResponse(text=" ".join(s for s in sentences if s) or "I have nothing to report.")
    return _assistant_calls(_prompt(request))


# The planner: plan → submit → (approved) task list and work, or (rejected) stop.


class Trip(BaseModel):
    """What the planner reads from the prompt."""

    city: str
    amount: float
    currency: str
    target: str

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.city.lower()).strip("-") or "trip"

    @property
    def plan_path(self) -> str:
        return f"{DEFAULT_PLANS_DIR}/{self.slug}-weekend.md"

    @property
    def budget(self) -> str:
        return f"{self.amount:g} {self.currency}"

    def tasks(self) -> list[dict[str, str]]:
        """The work, as ``task_write`` records it (with explicit ids, so later calls can name them)."""
        return [
            {
                "id": "forecast",
                "content": f"Check the {self.city} forecast",
                "activeForm": f"Checking the {self.city} forecast",
            },
            {
                "id": "budget",
                "content": f"Convert the {self.budget} budget to {self.target}",
                "activeForm": f"Converting the {self.budget} budget to {self.target}",
            },
            {
                "id": "itinerary",
                "content": "Draft the two-day itinerary",
                "activeForm": "Drafting the two-day itinerary",
            },
        ]

    def plan_markdown(self) -> str:
        steps = "\n".join(f"{number}. {task['content']}" for number, task in enumerate(self.tasks(), 1))
        return (
            f"# Weekend in {self.city}\n\n"
            f"Two days in {self.city} for {self.budget}, with prices shown in {self.target}.\n\n"
            f"{steps}\n\n"
            "Indoor plans if it rains; the budget covers food, transport and one paid sight.\n"
        )


def read_trip(prompt: str) -> Trip:
    city_match = _CITY.search(prompt)
    budget_match = _BUDGET.search(prompt)
    target_match = _PRICED_IN.search(prompt)
    amount, currency = (float(budget_match.group(1)), budget_match.group(2)) if budget_match else (120.0, "EUR")
    target = target_match.group(1) if target_match else ("USD" if currency != "USD" else "EUR")
    return Trip(city=city_match.group(1) if city_match else "Lisbon", amount=amount, currency=currency, target=target)


def planner_script(request: ModelRequest) -> ScriptedResponse:
    """Decide the next step from the tool results so far: a function of the transcript, so retries repeat it."""
    trip = read_trip(_prompt(request))
    results = _results(request)
    names = [part.tool_name for part in results]
    if "submit_plan" not in names:
        if "write_file" not in names or results[names.index("write_file")].is_error:
            return ScriptedResponse(
                text=f"I'll write the plan down first, in {trip.plan_path}.",
                tool_calls=[ScriptedToolCall("write_file", {"path": trip.plan_path, "content": trip.plan_markdown()})],
            )
        return ScriptedResponse(
            text="Submitting it for review.",
            tool_calls=[ScriptedToolCall("submit_plan", {"path": trip.plan_path})],
        )
    decision = results[len(names) - 1 - names[::-1].index("submit_plan")]
    content = decision.result.get("content", "") if isinstance(decision.result, dict) else str(decision.result)
    if not content.startswith("Plan approved"):
        feedback = content.partition("User feedback:")[2].split("\n\n", 1)[0].strip()
        text = "The plan was not approved, so I stay in plan mode and change nothing."
        if feedback:
            text += f' Your feedback ("{feedback}") goes into the next version of {trip.plan_path}.'
        else:
            text += " Tell me what to change and I'll revise it."
        return ScriptedResponse(text=text)
    return _build_step(trip, request, names[names.index("submit_plan") + 1 :])


def _build_step(trip: Trip, request: ModelRequest, done: list[str]) -> ScriptedResponse:
    tasks = trip.tasks()
    first, second, third = (task["id"] for task in tasks)
    if "task_write" not in done:
        statuses = ["in_progress", "pending", "pending"]
        return ScriptedResponse(
            text="Plan approved, so I'm in build mode now. First the task list, and the forecast.",
            tool_calls=[
                ScriptedToolCall(
                    "task_write", {"tasks": [{**t, "status": s} for t, s in zip(tasks, statuses, strict=True)]}
                ),
                ScriptedToolCall("get_weather", {"city": trip.city}),
            ],
        )
    if "convert_currency" not in done:
        return ScriptedResponse(
            text="Forecast in. Now the budget.",
            tool_calls=[
                ScriptedToolCall("task_complete", {"id": first}),
                ScriptedToolCall("task_update", {"id": second, "status": "in_progress"}),
                ScriptedToolCall(
                    "convert_currency", {"amount": trip.amount, "source": trip.currency, "target": trip.target}
                ),
            ],
        )
    completed = done.count("task_complete")
    if completed == 1:
        return ScriptedResponse(
            text="Budget converted. Drafting the itinerary.",
            tool_calls=[
                ScriptedToolCall("task_complete", {"id": second}),
                ScriptedToolCall("task_update", {"id": third, "status": "in_progress"}),
            ],
        )
    if completed == 2:
        return ScriptedResponse(
            text="Itinerary drafted.", tool_calls=[ScriptedToolCall("task_complete", {"id": third})]
        )
    by_name = {part.tool_name: part for part in _results(request)}
    weather, money = by_name.get("get_weather"), by_name.get("convert_currency")
    rainy = weather is not None and isinstance(weather.result, dict) and "rain" in str(weather.result["conditions"])
    day_one = "the Gulbenkian museum and a long lunch" if rainy else "Alfama on foot and the castle at sunset"
    return ScriptedResponse(
        text=" ".join(
            s
            for s in (
                "All three tasks are done.",
                _weather_sentence(weather),
                _money_sentence(money),
                f"Day one: {day_one}; day two: Belém and the riverside, with pastries on the way.",
            )
            if s
        )
    )


# App ------------------------------------------------------------------------------------------

PLAN_MODE = AgentMode(
    id="plan",
    instructions="Plan first: write the plan to a markdown file in .plans/ and submit it with submit_plan.",
    active_tools=["write_file", "submit_plan"],
    transitions_to="build",
)
BUILD_MODE = AgentMode(
    id="build",
    instructions="Carry out the approved plan. Track the work with the task tools.",
    active_tools=["task_write", "task_update", "task_complete", "task_check", "get_weather", "convert_currency"],
)


def create_app(store: str = DEFAULT_STORE_URL, task_queue: str = "tempo-agents") -> App:
    """A fresh App with the ``planner`` and ``assistant`` agents (each call builds new agents and tools)."""
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
    write_tool = create_tool(
        id="write-file",
        description=f"Write a text file directly inside {DEFAULT_PLANS_DIR}/ under the project root",
        input_schema=WriteFileIn,
        execute=write_file,
    )
    planner = Agent(
        id=DEMO_AGENT,
        name="Planner",
        instructions="You plan trips, get the plan approved, then carry it out.",
        model=ScriptedModel(planner_script, model_id="demo-planner", delta_delay=0.01),
        tools={
            "write_file": write_tool,
            "submit_plan": submit_plan_tool,
            "get_weather": weather_tool,
            "convert_currency": currency_tool,
        },
        signals=[TaskSignalProvider()],
        modes=[PLAN_MODE, BUILD_MODE],
        default_options={"max_steps": MAX_STEPS},
    )
    assistant = Agent(
        id="assistant",
        name="Assistant",
        instructions="You are a helpful assistant. Use the tools for weather and currency questions.",
        model=ScriptedModel(script, model_id="demo-script", delta_delay=0.02),
        tools={"get_weather": weather_tool, "convert_currency": currency_tool},
    )
    return App(agents=[planner, assistant], store=store, task_queue=task_queue)


app = create_app()
