"""A worker that dies while a run's local activities are under way loses nothing that was finished.

Real worker processes (``tempo-agents worker``) on the session's dev server. The agent's model steps and both of
its tools are local activities, so they all run inside one workflow task: when ``killer`` SIGKILLs its worker,
the model step and ``quick`` have already saved their outcomes, but the server has heard of none of it. The next
worker runs the workflow task again; the model step and ``quick`` must be answered from the store, not run again.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tempo_agents.journal.chunks import ToolResultChunk
from tests.support.worker_processes import MakeWorkerProcesses

pytestmark = pytest.mark.timeout(120)

APP = """
import asyncio
import os
import signal
from pathlib import Path

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.activity_options import ActivityOptions

HERE = Path(__file__).parent
LOCAL = ActivityOptions(local=True)


def log(line: str) -> None:
    with (HERE / "executions.log").open("a") as file:
        file.write(line + "\\n")


async def quick(data: dict, ctx: ToolContext) -> str:
    log("quick")
    return "quick done"


async def killer(data: dict, ctx: ToolContext) -> str:
    log("killer")
    await asyncio.sleep(0.5)  # quick's outcome is saved by now
    marker = HERE / "killed-once"
    if not marker.exists():
        marker.write_text("yes")
        os.kill(os.getpid(), signal.SIGKILL)
    return "killer done"


class LoggedModel(ScriptedModel):
    async def stream(self, request):
        log(f"model {request.step}")
        async for event in super().stream(request):
            yield event


model = LoggedModel(
    [
        ScriptedResponse(
            text="Both.", tool_calls=[ScriptedToolCall("quick", {}, id="q1"), ScriptedToolCall("killer", {}, id="k1")]
        ),
        ScriptedResponse(text="Survived."),
    ]
)
tools = {
    "quick": create_tool(id="quick", description="Answers at once", execute=quick, activity=LOCAL),
    "killer": create_tool(id="killer", description="Kills its first worker", execute=killer, activity=LOCAL),
}
app = App(agents=[Agent(id="local-survivor", model=model, tools=tools, model_step_activity=LOCAL)])
"""


async def test_finished_local_activities_never_run_again(tmp_path: Path, worker_processes: MakeWorkerProcesses) -> None:
    processes = worker_processes(APP, "local_loss_app")
    client_app = processes.app
    workers = [processes.start()]
    deaths = 0
    try:
        started = time.monotonic()
        stream = await client_app.agent("local-survivor").stream("go")
        done = asyncio.create_task(stream.result())
        while not done.done() and time.monotonic() - started < 90:
            if workers[-1].poll() is not None:
                deaths += 1
                workers.append(processes.start())
            await asyncio.sleep(0.1)
        result = await done
        elapsed = time.monotonic() - started
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    executions = (tmp_path / "executions.log").read_text().splitlines()
    assert deaths == 1
    assert result.text == "Both.Survived."
    results = {c.payload.tool_call_id: c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk)}
    assert results == {"q1": "quick done", "k1": "killer done"}
    # The model was asked once per step and quick ran once; only the killed call ran twice (at least once).
    assert sorted(executions) == ["killer", "killer", "model 0", "model 1", "quick"]
    journal = [c async for c in client_app.attach(stream.run_id).full_stream]
    assert [c.type for c in journal].count("step-start") == 2 and "step-reset" not in [c.type for c in journal]
    print(f"run finished {elapsed:.1f} s after its start, one worker death included")
