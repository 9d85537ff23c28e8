"""What the demo's scripted models answer: a function of the transcript so far, so a retried step repeats itself.

The ``assistant`` calls both tools in parallel, then answers from their results. The ``planner``
writes a plan file and submits it; once approved it records a task list and works through it, once
rejected it stops.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from tempo_agents import ScriptedResponse, ScriptedToolCall
from tempo_agents.models import ModelRequest
from tempo_agents.models.messages import ToolResultPart
from tempo_agents.tools.builtin.submit_plan import DEFAULT_PLANS_DIR

__all__ = ["Trip", "assistant_script", "planner_script", "read_trip"]

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


def assistant_script(request: ModelRequest) -> ScriptedResponse:
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
        """The city as a file-name part (``lisbon``)."""
        return re.sub(r"[^a-z0-9]+", "-", self.city.lower()).strip("-") or "trip"

    @property
    def plan_path(self) -> str:
        """Where the plan file goes, relative to the project root."""
        return f"{DEFAULT_PLANS_DIR}/{self.slug}-weekend.md"

    @property
    def budget(self) -> str:
        """The budget as the plan shows it (``120 EUR``)."""
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
        """The plan file the planner writes and submits."""
        steps = "\n".join(f"{number}. {task['content']}" for number, task in enumerate(self.tasks(), 1))
        return (
            f"# Weekend in {self.city}\n\n"
            f"Two days in {self.city} for {self.budget}, with prices shown in {self.target}.\n\n"
            f"{steps}\n\n"
            "Indoor plans if it rains; the budget covers food, transport and one paid sight.\n"
        )


def read_trip(prompt: str) -> Trip:
    """The trip a prompt asks for (Lisbon on 120 EUR, priced in USD, where it does not say)."""
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
