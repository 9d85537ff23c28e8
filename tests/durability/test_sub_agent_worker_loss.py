"""Every worker SIGKILLed while a sub-agent's run is in the middle of a tool call: the parent and the child
finish on new workers, no tool whose result was saved runs again, and the parent's stream holds each of the
child's chunks once. Real worker processes (``tempo-agents worker``) on the session's dev server."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import pytest

from tempo_agents.journal.chunks import ToolOutputChunk, ToolResultChunk
from tests.support.worker_processes import MakeWorkerProcesses

pytestmark = pytest.mark.timeout(180)

APP = """
import asyncio
from datetime import timedelta
from pathlib import Path

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.activity_options import ActivityOptions

HERE = Path(__file__).parent
FAST = ActivityOptions(heartbeat_timeout=timedelta(seconds=2), retry_initial_interval=timedelta(milliseconds=100))


def log(line: str) -> None:
    with (HERE / "executions.log").open("a") as file:
        file.write(line + "\\n")


async def once(data: dict, ctx: ToolContext) -> str:
    log(f"once {ctx.attempt}")
    return "counted"


async def waiter(data: dict, ctx: ToolContext) -> str:
    log(f"waiter {ctx.attempt}")
    while not (HERE / "go").exists():
        await asyncio.sleep(0.05)
    return "went"


child = Agent(
    id="child",
    description="Counts, then waits",
    model=ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("once", {}, id="o1")]),
            ScriptedResponse(tool_calls=[ScriptedToolCall("waiter", {}, id="w1")]),
            ScriptedResponse(text="Child finished."),
        ]
    ),
    tools={
        "once": create_tool(id="once", description="Runs once", execute=once, activity=FAST),
        "waiter": create_tool(id="waiter", description="Waits for go", execute=waiter, activity=FAST),
    },
)
parent = Agent(
    id="parent",
    model=ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("agent-child", {"prompt": "work"}, id="a1")]),
            ScriptedResponse(text="Parent finished."),
        ]
    ),
    agents={"child": child},
)
app = App(agents=[parent])
"""


async def test_killing_every_worker_while_the_child_runs(tmp_path: Path, worker_processes: MakeWorkerProcesses) -> None:
    processes = worker_processes(APP, "sub_loss_app")
    client_app = processes.app
    log = tmp_path / "executions.log"

    def start_workers() -> list[subprocess.Popen[bytes]]:
        return [processes.start() for _ in range(2)]

    workers = start_workers()
    try:
        stream = await client_app.agent("parent").stream("go")
        done = asyncio.create_task(stream.result())
        started = time.monotonic()
        while not (log.exists() and "waiter 1" in log.read_text()):  # the child is in its second tool
            assert time.monotonic() - started < 60 and not done.done()
            await asyncio.sleep(0.05)
        for worker in workers:
            worker.kill()
            worker.wait()
        workers = start_workers()
        (tmp_path / "go").touch()
        result = await asyncio.wait_for(done, timeout=120)
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()

    executions = log.read_text().split("\n")
    assert [line for line in executions if line.startswith("once")] == ["once 1"]  # its result was saved
    assert result.text == "Parent finished."
    [agent_result] = [c for c in result.chunks if isinstance(c, ToolResultChunk)]
    assert agent_result.payload.result["text"] == "Child finished."
    child_id = f"{result.run_id}-a1"
    child_journal = await client_app.store.read_chunks(child_id, 0, limit=10_000)
    relayed = [c for c in result.chunks if isinstance(c, ToolOutputChunk) and c.payload.tool_call_id == "a1"]
    # every chunk of the child's journal reached the parent once, in order, whatever the retries
    assert [c.payload.output for c in relayed] == [{**entry.chunk, "offset": entry.offset} for entry in child_journal]
    parent_history = await client_app.client.get_workflow_handle(result.run_id).fetch_history()
    child_history = await client_app.client.get_workflow_handle(child_id).fetch_history()
    print(f"parent {len(parent_history.events)} events, child {len(child_history.events)} events")
    assert len(parent_history.events) < 100  # a handful of events per child segment, none per child step
