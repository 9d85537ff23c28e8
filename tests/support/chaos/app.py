"""The App the chaos harness runs in worker subprocesses that it SIGKILLs.

Agents on a scripted model (:data:`STEPS` tool steps, then the answer); every tool step calls two tools in
parallel: ``alpha``, an activity, and ``beta``, a local activity. ``chaos-suspend`` also calls ``approve`` (which
suspends) at :data:`SUSPEND_STEP`.

Every tool ``execute`` and every model stream appends one JSON line when it starts and one when it ends to
the execution log named by ``$CHAOS_EXEC_LOG`` (one ``write`` on an ``O_APPEND`` file: lines of concurrent
processes never interleave, and their order in the file is the order they happened). The checker
(``tests/support/chaos/check.py``) reads that log next to the store.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel
from temporalio import activity

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.models.model import ModelEvent, ModelRequest

EXEC_LOG_ENV = "CHAOS_EXEC_LOG"
WORKER_ENV = "CHAOS_WORKER"
"""The name the harness gave this worker process (one per start, so a restarted worker has a new name)."""
STEPS = 6
"""Model steps that call tools; one more step answers."""
SUSPEND_STEP = 2
"""The step at which ``chaos-suspend`` also calls the suspending ``approve`` tool."""
ERROR_STEP = 3
"""At this step ``beta`` fails on purpose: a saved ``tool-error`` must not be executed again either."""
FINAL_ANSWER = "All done: every step finished."
MAX_STEPS = STEPS + 3
DELTA_DELAY = 0.02
"""Seconds between streamed words: a model step streams for a few hundred ms, so kills land in it too."""
TOOL_SLEEP = (0.03, 0.4)
"""Each tool execution sleeps a random time in this range (seconds)."""
AGENT_IDS = ("chaos", "chaos-suspend", "chaos-long", "chaos-long-local")
"""``chaos``: the plain script. ``chaos-suspend``: also suspends at :data:`SUSPEND_STEP`, its model steps local
activities. ``chaos-long``: the plain script, but its first call (:data:`LONG_CALL`) sleeps :data:`LONG_SLEEP` s,
long enough to be killed many times. ``chaos-long-local``: the same with the long call :data:`LONG_LOCAL_CALL`, a
call of the local tool ``beta``."""
LONG_CALL = "call_0_0"
LONG_LOCAL_CALL = "call_0_1"
LONG_CALLS = {"chaos-long": LONG_CALL, "chaos-long-local": LONG_LOCAL_CALL}
"""The long call of each long agent."""
LONG_SLEEP = 1.5
LOCAL_TOOLS = ("beta",)
"""Tools that declare themselves short (``ActivityOptions(local=True)``): they run as local activities, so every
scenario has local activities in the mix (``alpha`` stays an activity)."""
LOCAL_MODEL_STEPS = ("chaos-suspend",)
"""Agents whose model steps are local activities too."""
PARENT_AGENT = "chaos-parent"
"""A parent whose first step delegates to the sub-agent ``chaos`` (the plain script, as a child run), then answers
:data:`PARENT_ANSWER`."""
DELEGATE_CALL = "delegate_0"
PARENT_ANSWER = "The sub-agent ran every step."


def child_run_id(parent_run_id: str) -> str:
    """The run id of a ``chaos-parent`` run's child (``<run id>-<tool call id>``)."""
    return f"{parent_run_id}-{DELEGATE_CALL}"


def step_text(step: int) -> str:
    """What the model says at ``step`` (the last step says :data:`FINAL_ANSWER`)."""
    if step >= STEPS:
        return FINAL_ANSWER
    return f"Step {step} starts: calling alpha and beta together, then waiting for both. "


def expected_text() -> str:
    """The whole text of a run, every step's text in order."""
    return "".join(step_text(step) for step in range(STEPS + 1))


def expected_calls(agent_id: str, step: int) -> list[tuple[str, str]]:
    """``(tool_call_id, tool_name)`` of the calls the script makes at ``step``."""
    if step >= STEPS:
        return []
    names = ["alpha", "beta"]
    if agent_id == "chaos-suspend" and step == SUSPEND_STEP:
        names.append("approve")
    return [(f"call_{step}_{index}", name) for index, name in enumerate(names)]


def log_event(**fields: Any) -> None:
    """Append one line to the execution log (nothing when ``$CHAOS_EXEC_LOG`` is unset)."""
    path = os.environ.get(EXEC_LOG_ENV)
    if not path:
        return
    record = {"t": time.time(), "pid": os.getpid(), "worker": os.environ.get(WORKER_ENV), **fields}
    line = json.dumps(record, separators=(",", ":")) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _attempts(ctx: ToolContext) -> dict[str, Any]:
    """The attempt as the tool context says (``ctx.attempt``, when the runtime has it) and as Temporal says."""
    return {
        "attempt": getattr(ctx, "attempt", None),
        "activityAttempt": activity.info().attempt if activity.in_activity() else None,
    }


class ToolIn(BaseModel):
    step: int
    n: int
    sleep: float | None = None
    """Seconds to sleep instead of a random time (``chaos-long`` sets it for one call)."""


async def _work(name: str, data: ToolIn, ctx: ToolContext) -> dict[str, Any]:
    common = {"kind": "tool", "run": ctx.run_id, "call": ctx.tool_call_id, "tool": name, "phase": "first"}
    log_event(ev="start", **common, **_attempts(ctx))
    await asyncio.sleep(data.sleep if data.sleep is not None else random.uniform(*TOOL_SLEEP))
    if name == "beta" and data.step == ERROR_STEP:
        log_event(ev="end", outcome="error", **common)
        raise ValueError(f"beta fails on purpose at step {data.step}")
    log_event(ev="end", outcome="result", **common)
    return {"tool": name, "step": data.step, "n": data.n}


async def alpha(data: ToolIn, ctx: ToolContext) -> dict[str, Any]:
    return await _work("alpha", data, ctx)


async def beta(data: ToolIn, ctx: ToolContext) -> dict[str, Any]:
    return await _work("beta", data, ctx)


async def approve(data: ToolIn, ctx: ToolContext) -> Any:
    phase = "first" if ctx.resume_data is None else "resume"
    common = {"kind": "tool", "run": ctx.run_id, "call": ctx.tool_call_id, "tool": "approve", "phase": phase}
    log_event(ev="start", **common, **_attempts(ctx))
    await asyncio.sleep(random.uniform(*TOOL_SLEEP))
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        log_event(ev="end", outcome="suspend", **common)
        return await ctx.suspend({"question": f"approve step {data.step}?"})
    log_event(ev="end", outcome="result", **common)
    return {"approved": ctx.resume_data}


class LoggedScriptedModel(ScriptedModel):
    """A :class:`ScriptedModel` that logs when each step's stream starts and ends. It keeps none of the requests a
    :class:`ScriptedModel` records for tests (its last 1,000, each with the run's messages): over a soak's hour they
    would fill a worker's memory for nothing any check reads."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.clear()
        common = {"kind": "model", "run": request.run_id, "call": f"step-{request.step}", "phase": "first"}
        attempt = activity.info().attempt if activity.in_activity() else None
        log_event(ev="start", **common, attempt=None, activityAttempt=attempt)
        async for event in super().stream(request):
            yield event
        log_event(ev="end", outcome="result", **common)


def _args(agent_id: str, step: int, index: int, call_id: str) -> dict[str, Any]:
    args: dict[str, Any] = {"step": step, "n": index}
    if LONG_CALLS.get(agent_id) == call_id:
        args["sleep"] = LONG_SLEEP
    return args


def _script(agent_id: str) -> Any:
    def respond(request: ModelRequest) -> ScriptedResponse:
        calls = [
            ScriptedToolCall(name, _args(agent_id, request.step, index, call_id), id=call_id)
            for index, (call_id, name) in enumerate(expected_calls(agent_id, request.step))
        ]
        return ScriptedResponse(text=step_text(request.step), tool_calls=calls)

    return respond


def _parent_script(request: ModelRequest) -> ScriptedResponse:
    if request.step == 0:
        call = ScriptedToolCall("agent-chaos", {"prompt": "run every step"}, id=DELEGATE_CALL)
        return ScriptedResponse(text="Handing the steps to the sub-agent. ", tool_calls=[call])
    return ScriptedResponse(text=PARENT_ANSWER)


_SHORT = ActivityOptions(local=True)


def build_app(store: str = "sqlite:///.tempo-agents/chaos.db", task_queue: str = "chaos") -> App:
    """The chaos App (workers load it with ``--app tests.support.chaos.app:app`` and override store and queue)."""
    tools = {
        "alpha": create_tool(id="alpha", description="Sleeps, then answers", input_schema=ToolIn, execute=alpha),
        "beta": create_tool(
            id="beta", description="Sleeps, then answers", input_schema=ToolIn, execute=beta, activity=_SHORT
        ),
    }
    approval = create_tool(id="approve", description="Waits for a person", input_schema=ToolIn, execute=approve)
    agents = [
        Agent(
            id=agent_id,
            model=LoggedScriptedModel(_script(agent_id), delta_delay=DELTA_DELAY),
            tools={**tools, "approve": approval} if agent_id == "chaos-suspend" else tools,
            default_options={"max_steps": MAX_STEPS},
            model_step_activity=_SHORT if agent_id in LOCAL_MODEL_STEPS else None,
        )
        for agent_id in AGENT_IDS
    ]
    parent = Agent(
        id=PARENT_AGENT,
        model=LoggedScriptedModel(_parent_script, delta_delay=DELTA_DELAY),
        agents={"chaos": agents[0]},
        default_options={"max_steps": 3},
    )
    return App(agents=[*agents, parent], store=store, task_queue=task_queue)


app = build_app()
