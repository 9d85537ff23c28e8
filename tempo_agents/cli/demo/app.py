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
The app also has a single-step ``assistant`` agent (two tools called in parallel)::

    tempo-agents worker --app tempo_agents.cli.demo.app:create_app --address localhost:7233
    tempo-agents run assistant "Weather in Oslo, and 250 NOK in EUR?" --app tempo_agents.cli.demo.app:create_app
"""

from __future__ import annotations

from tempo_agents import Agent, App, ScriptedModel, create_tool
from tempo_agents.agent.modes import AgentMode
from tempo_agents.cli.demo.scripts import assistant_script, planner_script
from tempo_agents.cli.demo.tools import (
    ConvertIn,
    WeatherIn,
    WeatherOut,
    WriteFileIn,
    convert_currency,
    get_weather,
    write_file,
)
from tempo_agents.signals import TaskSignalProvider
from tempo_agents.store.url import DEFAULT_STORE_URL
from tempo_agents.tools import submit_plan_tool
from tempo_agents.tools.builtin.submit_plan import DEFAULT_PLANS_DIR

__all__ = ["BUILD_MODE", "DEMO_AGENT", "DEMO_PROMPT", "MAX_STEPS", "PLAN_MODE", "create_app"]

DEMO_AGENT = "planner"
DEMO_PROMPT = "Plan a weekend in Lisbon on a 120 EUR budget, priced in USD, then carry the plan out."
MAX_STEPS = 12
"""The planner's runs take 7 steps (2 in plan mode, 5 in build mode); a little headroom."""

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
        model=ScriptedModel(assistant_script, model_id="demo-script", delta_delay=0.02),
        tools={"get_weather": weather_tool, "convert_currency": currency_tool},
    )
    return App(agents=[planner, assistant], store=store, task_queue=task_queue)
