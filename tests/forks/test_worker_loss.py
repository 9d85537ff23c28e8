"""A fork survives SIGKILLed workers like any run: its first model step (which copies the origin's transcript) and
its tools are retried on another worker, a reused call is still never executed, a killed one runs again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.worker_processes import MakeWorkerProcesses, replace_dead_workers

pytestmark = pytest.mark.timeout(180)

APP = """
import os
import signal
from pathlib import Path

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool

LOG = Path(__file__).with_name("executions.log")


def log(line: str) -> None:
    with LOG.open("a") as file:
        file.write(line + "\\n")


def respond(request):
    turn = sum(1 for m in request.messages if m.role == "assistant")
    forked = any(m.role == "user" and m.text == "And Oslo?" for m in request.messages)
    if turn == 0:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"city": "Paris"}, id="p")])
    if turn == 1 and forked:
        if not Path(__file__).with_name("model-killed").exists():
            Path(__file__).with_name("model-killed").touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return ScriptedResponse(tool_calls=[
            ScriptedToolCall("lookup", {"city": "Paris"}, id="p2"),
            ScriptedToolCall("fragile", {"city": "Oslo"}, id="o2"),
        ])
    return ScriptedResponse(text="Done after %d steps." % turn)


async def lookup(data: dict, ctx: ToolContext) -> dict:
    log(f"lookup {data['city']} {ctx.attempt}")
    return {"city": data["city"], "sky": "clear"}


async def fragile(data: dict, ctx: ToolContext) -> dict:
    log(f"fragile {data['city']} {ctx.attempt}")
    if ctx.attempt == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"city": data["city"], "sky": "snow"}


tools = {
    "lookup": create_tool(id="lookup", description="Weather", execute=lookup),
    "fragile": create_tool(id="fragile", description="Weather, killing its first worker", execute=fragile),
}
app = App(agents=[Agent(id="travel", model=ScriptedModel(respond), tools=tools)])
"""


async def test_a_fork_survives_sigkilled_workers(tmp_path: Path, worker_processes: MakeWorkerProcesses) -> None:
    processes = worker_processes(APP, "fork_loss_app")
    app = processes.app
    workers = [processes.start() for _ in range(2)]
    try:
        original = await app.generate("travel", "Weather?")
        assert original.text == "Done after 1 steps."
        stream = await app.fork(original.run_id, at_step=1, messages="And Oslo?", reuse="tools")
        done = asyncio.create_task(stream.result())
        deaths = await replace_dead_workers(processes, workers, done)
        forked = await done
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    assert deaths == 2  # the fork's first model step, then its fragile tool
    assert forked.text == "Done after 2 steps."
    results = {c.payload.tool_call_id: c.payload.result for c in forked.tool_results}
    assert results == {"p2": {"city": "Paris", "sky": "clear"}, "o2": {"city": "Oslo", "sky": "snow"}}
    assert [c.type for c in forked.chunks].count("data-tool-reused") == 1
    executions = (tmp_path / "executions.log").read_text().splitlines()
    assert executions == ["lookup Paris 1", "fragile Oslo 1", "fragile Oslo 2"]
