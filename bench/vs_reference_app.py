"""The App ``bench/vs_reference.py`` serves: the reference server's scripted ``assistant`` and two bigger shapes.

- ``assistant``: ``examples/reference_parity.py``'s agent ("weather" → the weather tool, then the answer), the
  same workload as the reference server's scripted app;
- ``ten-steps``: nine steps that each call the weather tool, then the answer (ten model steps);
- ``three-parallel``: three steps that each call the weather tool three times in parallel, then the answer.

``BENCH_LOCAL_TOOLS=1`` declares the weather tool short (``ActivityOptions(local=True)``), ``BENCH_LOCAL_MODEL=1``
the model steps too; the bench sets them per configuration.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.models.model import ModelRequest
from tempo_agents.models.usage import Usage

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "reference_parity.py"


def _parity() -> ModuleType:
    """``examples/reference_parity.py`` (loaded by path: ``examples`` is no package)."""
    name = "reference_parity"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


parity: Any = _parity()

LOCAL_TOOLS = os.environ.get("BENCH_LOCAL_TOOLS") == "1"
LOCAL_MODEL = os.environ.get("BENCH_LOCAL_MODEL") == "1"
TEN_STEPS = 10
PARALLEL_STEPS = 3
PARALLEL_TOOLS = 3
_USAGE = Usage(input_tokens=10, output_tokens=5, total_tokens=15)

weather = create_tool(
    id="weather-tool",
    description="Weather for a city",
    input_schema=parity.CityIn,
    output_schema=parity.Weather,
    execute=parity.look_up_weather,
    activity=ActivityOptions(local=True) if LOCAL_TOOLS else None,
)
model_steps = ActivityOptions(local=True) if LOCAL_MODEL else None


def _steps(tool_steps: int, tools_per_step: int) -> ScriptedModel:
    def respond(request: ModelRequest) -> ScriptedResponse:
        if request.step >= tool_steps:
            return ScriptedResponse(text="All looked up.", usage=_USAGE)
        calls = [
            ScriptedToolCall("weather", {"city": f"City {request.step}.{n}"}, id=f"call-{request.step}-{n}")
            for n in range(tools_per_step)
        ]
        return ScriptedResponse(text="Looking up.", tool_calls=calls, usage=_USAGE)

    return ScriptedModel(respond)


def _agent(agent_id: str, model: ScriptedModel, max_steps: int) -> Agent:
    return Agent(
        id=agent_id,
        instructions="You answer weather questions.",
        model=model,
        tools={"weather": weather},
        model_step_activity=model_steps,
        default_options={"max_steps": max_steps},
    )


app = App(
    agents=[
        parity.build_assistant(tools={"weather": weather}, model_step_activity=model_steps),
        _agent("ten-steps", _steps(TEN_STEPS - 1, 1), TEN_STEPS + 1),
        _agent("three-parallel", _steps(PARALLEL_STEPS, PARALLEL_TOOLS), PARALLEL_STEPS + 2),
    ],
    task_queue="bench-vs-reference",
)
