"""The CLI on a thread: ``run --thread --resource --thread-strategy`` (a refused message exits 1 naming the active
run, a queued one says where it waits), ``thread show`` (runs and messages as JSON) and ``thread cancel``."""

from __future__ import annotations

import asyncio
import json
import signal
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.support.cli_processes import read_until, run_cli, start_cli, stop_cli

pytestmark = pytest.mark.timeout(180)

APP_MODULE = """
import asyncio
from pathlib import Path

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse

GATE = Path(__file__).with_name("gate")


async def respond(request):
    while not GATE.exists():
        await asyncio.sleep(0.05)
    users = [m.text for m in request.messages if m.role == "user"]
    return ScriptedResponse(text=f"{users[-1]} after {len(users)}")


app = App(agents=[Agent(id="chat", model=ScriptedModel(respond))])
"""


async def test_run_on_a_thread_show_and_cancel(temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    (tmp_path / "chatapp.py").write_text(APP_MODULE)
    common = [
        "--address", temporal_env.client.service_client.config.target_host,
        "--task-queue", f"tq-{uuid.uuid4()}", "--app", "chatapp:app", "--store", f"sqlite:///{tmp_path / 'store.db'}",
    ]  # fmt: skip
    thread = ["--thread", "t", "--resource", "r"]
    worker = await start_cli(["worker", *common], tmp_path)
    try:
        await read_until(worker, "polling task queue")
        first = await start_cli(["run", "chat", "one", *thread, *common], tmp_path)
        first_line = await read_until(first, "run ")
        first_id = first_line.split()[1]
        refused = await asyncio.to_thread(
            run_cli, ["run", "chat", "two", *thread, "--thread-strategy", "reject", *common], tmp_path
        )
        assert refused.returncode == 1
        assert f'has an active run "{first_id}"' in refused.stderr
        queued = await start_cli(["run", "chat", "three", *thread, *common], tmp_path)
        queued_line = await read_until(queued, "queued at 1 behind")
        queued_id = queued_line.split()[1]
        assert queued_line.strip().endswith(first_id)
        last = await start_cli(["run", "chat", "four", *thread, *common], tmp_path)
        await read_until(last, "queued at 2 behind")

        shown = await asyncio.to_thread(run_cli, ["thread", "show", "t", "--resource", "r", *common], tmp_path)
        assert shown.returncode == 0, shown.stderr
        runs = json.loads(shown.stdout)["runs"]
        assert [r["runId"] for r in runs["active"]] == [first_id]
        assert len(runs["queued"]) == 2 and runs["queued"][0]["runId"] == queued_id

        cancelled = await asyncio.to_thread(
            run_cli, ["thread", "cancel", "t", queued_id, "--resource", "r", *common], tmp_path
        )
        assert cancelled.returncode == 0, cancelled.stderr
        again = await asyncio.to_thread(
            run_cli, ["thread", "cancel", "t", queued_id, "--resource", "r", *common], tmp_path
        )
        assert again.returncode == 1 and "is not queued" in again.stderr

        (tmp_path / "gate").touch()
        first_out, _ = await asyncio.wait_for(first.communicate(), 60)
        last_out, _ = await asyncio.wait_for(last.communicate(), 60)
        queued_out, _ = await asyncio.wait_for(queued.communicate(), 60)
    finally:
        await stop_cli(worker, signal.SIGTERM)
    assert "one after 1" in first_out.decode()
    assert "four after 2" in last_out.decode()
    assert first.returncode == 0 and last.returncode == 0
    assert "removed" in queued_out.decode() and queued.returncode == 1


PAYMENTS_MODULE = """
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool


def script(request):
    last = request.messages[-1]
    if last.role == "user" and last.text == "Pay" and request.step == 0:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {})])
    return ScriptedResponse(text="ok")


pay = create_tool(id="pay", description="Pays", execute=lambda data: "paid", require_approval=True)
app = App(agents=[Agent(id="payments", model=ScriptedModel(script), tools={"pay": pay})])
"""


async def test_run_waiting_holds_thread(temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    (tmp_path / "payapp.py").write_text(PAYMENTS_MODULE)
    common = [
        "--address", temporal_env.client.service_client.config.target_host,
        "--task-queue", f"tq-{uuid.uuid4()}", "--app", "payapp:app", "--store", f"sqlite:///{tmp_path / 'store.db'}",
    ]  # fmt: skip
    worker = await start_cli(["worker", *common], tmp_path)
    try:
        await read_until(worker, "polling task queue")
        for thread, holds, refused in (("yields", [], False), ("holds", ["--waiting-holds-thread"], True)):
            where = ["--thread", thread, "--resource", "r"]
            paying = await asyncio.to_thread(run_cli, ["run", "payments", "Pay", *where, *holds, *common], tmp_path)
            assert paying.returncode == 0 and "suspended" in paying.stdout, paying.stderr
            hello = await asyncio.to_thread(
                run_cli, ["run", "payments", "hi", *where, "--thread-strategy", "reject", *common], tmp_path
            )
            assert (hello.returncode == 1) == refused, (thread, hello.stdout, hello.stderr)
            assert ("has an active run" in hello.stderr) == refused
    finally:
        await stop_cli(worker, signal.SIGTERM)
