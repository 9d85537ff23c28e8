"""Steer, interrupt and rollback hold when the worker running the run is SIGKILLed: what was sent while no worker ran
is kept by Temporal and acted on by the next worker, once (the steer seen once, the interrupt honoured, the rolled-back
run's messages gone from its thread)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.client import WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents import App
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import RunResult
from tests.support.worker_processes import MakeWorkerProcesses, WorkerProcesses

pytestmark = pytest.mark.timeout(180)

APP = """
import asyncio
import json
from pathlib import Path

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool

HERE = Path(__file__).parent


def respond(request):
    users = [m.text for m in request.messages if m.role == "user"]
    with HERE.joinpath("requests.log").open("a") as file:
        file.write(json.dumps(users) + "\\n")
    if users[-1] == "Look it up":
        return ScriptedResponse(text="Looking.", tool_calls=[ScriptedToolCall("lookup", {})])
    return ScriptedResponse(text="Seen: " + ", ".join(users))


async def lookup(data: dict, ctx: ToolContext) -> str:
    HERE.joinpath(f"reached-{ctx.attempt}").touch()
    while not HERE.joinpath("release").exists():
        await asyncio.sleep(0.05)
    return "found"


tools = {"lookup": create_tool(id="lookup", description="Looks up", execute=lookup)}
app = App(agents=[Agent(id="looker", model=ScriptedModel(respond), tools=tools)])
"""

MEMORY = {"thread": "t-loss", "resource": "u-1"}
QUERY_PATIENCE = timedelta(seconds=10)
"""How long one query of the run may wait for its answer before it is asked again."""


async def _file(path: Path) -> None:
    while not path.exists():
        await asyncio.sleep(0.05)


def _kill(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        worker.kill()
        worker.wait()


async def _lost_worker(tmp_path: Path, worker_processes: MakeWorkerProcesses) -> tuple[WorkerProcesses, App, str]:
    """An App in worker processes with a run whose tool runs; the worker is then SIGKILLed (the run has none)."""
    processes = worker_processes(APP, f"steer_loss_{tmp_path.name.replace('-', '_')}")
    app = processes.app
    worker = processes.start()
    await app.generate("looker", "First question", memory=MEMORY)
    stream = await app.stream("looker", "Look it up", memory=MEMORY)
    await _file(tmp_path / "reached-1")
    _kill([worker])
    return processes, app, stream.run_id


def _requests(tmp_path: Path) -> list[list[str]]:
    return [json.loads(line) for line in (tmp_path / "requests.log").read_text().splitlines()]


async def _steers_received(handle: WorkflowHandle[AgentRunWorkflow, RunResult]) -> int:
    """The run's count of steers, or 0 while the new worker process is still starting: Temporal refuses a query
    while no worker polls the run's task queue, and a query it gave the killed worker (whose queue it still took for
    the run's) is given up when no answer comes."""
    try:
        return await handle.query(AgentRunWorkflow.steers_received, rpc_timeout=QUERY_PATIENCE)
    except RPCError as error:
        given_up = error.status in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED)
        if not given_up and "no poller seen" not in error.message:
            raise
        return 0


async def test_a_steer_sent_while_the_worker_is_dead_is_seen_once_by_the_next_step(
    tmp_path: Path, worker_processes: MakeWorkerProcesses
) -> None:
    processes, app, run_id = await _lost_worker(tmp_path, worker_processes)
    steering = asyncio.create_task(app.steer(run_id, "Be brief", sent_by="alice"))
    workers = [processes.start()]
    try:
        handle = app.client.get_workflow_handle(run_id)
        while await _steers_received(handle) < 1:
            await asyncio.sleep(0.05)
        await _file(tmp_path / "reached-2")  # the call runs again on the new worker
        (tmp_path / "release").touch()
        accepted = await steering
        outcome = RunResult.model_validate(await handle.result())
    finally:
        _kill(workers)
    assert (accepted.status, accepted.step) == ("delivered", 1)
    assert outcome.finish_reason == "stop"
    assert _requests(tmp_path)[-1] == ["First question", "Look it up", "Be brief"]
    journal = [e.chunk for e in await app.store.read_chunks(run_id)]
    assert [c["data"]["text"] for c in journal if c["type"] == "data-user-message"] == ["Be brief"]


async def test_an_interrupt_sent_while_the_worker_is_dead_stops_the_run_at_its_next_step_boundary(
    tmp_path: Path, worker_processes: MakeWorkerProcesses
) -> None:
    processes, app, run_id = await _lost_worker(tmp_path, worker_processes)
    await app.interrupt(run_id)
    workers = [processes.start()]
    try:
        await _file(tmp_path / "reached-2")
        (tmp_path / "release").touch()
        outcome = RunResult.model_validate(await app.client.get_workflow_handle(run_id).result())
        after = await app.generate("looker", "What now?", memory=MEMORY)
    finally:
        _kill(workers)
    assert (outcome.finish_reason, outcome.steps) == ("interrupted", 1)
    assert after.text == "Seen: First question, Look it up, What now?"
    roles = [m["role"] for m in await app.store.get_thread_messages("t-loss", "u-1")]
    assert roles == ["user", "assistant", "user", "assistant", "tool", "user", "assistant"]


async def test_a_rollback_while_the_worker_is_dead_completes_once_a_worker_is_back(
    tmp_path: Path, worker_processes: MakeWorkerProcesses
) -> None:
    processes, app, run_id = await _lost_worker(tmp_path, worker_processes)
    rolling_back = asyncio.create_task(app.rollback(run_id))
    await asyncio.sleep(0.5)
    assert not rolling_back.done()  # it waits for the run to close, which needs a worker
    workers = [processes.start()]
    try:
        rolled_back = await rolling_back
        after = await app.generate("looker", "What now?", memory=MEMORY)
    finally:
        _kill(workers)
    assert rolled_back.status == "CANCELED"
    assert after.text == "Seen: First question, What now?"
    texts = [m["content"][0]["text"] for m in await app.store.get_thread_messages("t-loss", "u-1")]
    assert texts == ["First question", "Seen: First question", "What now?", "Seen: First question, What now?"]
    assert [e.chunk["type"] for e in await app.store.read_chunks(run_id)][-1] == "data-rolled-back"
