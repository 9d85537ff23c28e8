"""Records histories of steered and interrupted runs, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_steering PREFIX`` writes ``PREFIXsteer.json`` (a steer sent while the run's tool
ran, delivered into its next model step, and one sent while it waited for an approval, kept for the step after the
answer), ``PREFIXinterrupt.json`` (an interrupt while a tool ran: the run stops before its next model step) and
``PREFIXinterrupt-waiting.json`` (an interrupt while the run waited for an approval). Never re-record to make a
failing replay pass.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.agent_run import AgentRunWorkflow

HERE = Path(__file__).parent


async def _received(app: App, run_id: str, count: int) -> None:
    handle = app.client.get_workflow_handle(run_id)
    while await handle.query(AgentRunWorkflow.steers_received) < count:
        await asyncio.sleep(0.02)


async def _write(app: App, run_id: str, name: str) -> None:
    handle = app.client.get_workflow_handle(run_id)
    await handle.result()
    history = await handle.fetch_history()
    (HERE / name).write_text(history.to_json())
    print(f"wrote tests/histories/{name} ({len(history.events)} events)")


async def main(prefix: str) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    reached, release = asyncio.Event(), asyncio.Event()

    async def slow_lookup(data: dict[str, Any]) -> str:
        reached.set()
        await release.wait()
        return "found"

    def script(request: Any) -> ScriptedResponse:
        turn = sum(1 for m in request.messages if m.role == "assistant")
        first = next(m.text for m in request.messages if m.role == "user")
        if turn == 0 and first == "Look it up":
            return ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {}, id="look")])
        if turn in (0, 1) and first == "Look, then delete":
            name = "lookup" if turn == 0 else "delete"
            return ScriptedResponse(tool_calls=[ScriptedToolCall(name, {}, id=f"{name}-{turn}")])
        if turn == 0 and first == "Delete it":
            return ScriptedResponse(tool_calls=[ScriptedToolCall("delete", {}, id="del")])
        return ScriptedResponse(text="Done.")

    tools = {
        "lookup": create_tool(id="lookup", description="Looks up", execute=slow_lookup),
        "delete": create_tool(id="delete", description="Deletes", execute=lambda d: "gone", require_approval=True),
    }
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[Agent(id="steered", model=ScriptedModel(script), tools=tools)],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with app.worker():
            stream = await app.stream("steered", "Look, then delete", run_id=f"{prefix}steer")
            await reached.wait()
            steering = asyncio.create_task(app.steer(stream.run_id, "Then delete it", sent_by="alice"))
            await _received(app, stream.run_id, 1)
            release.set()
            await steering
            await stream.result()  # the delete waits for approval
            await app.steer(stream.run_id, "Say when done", sent_by="bob")  # kept for the step after the answer
            await (await app.approve_tool_call("steered", run_id=stream.run_id)).result()
            await _write(app, stream.run_id, f"{prefix}steer.json")

            reached.clear()
            release.clear()
            stream = await app.stream("steered", "Look it up", run_id=f"{prefix}interrupt")
            await reached.wait()
            await app.interrupt(stream.run_id, by_run_id="next-run")
            release.set()
            await _write(app, stream.run_id, f"{prefix}interrupt.json")

            waiting = await app.generate("steered", "Delete it", run_id=f"{prefix}interrupt-waiting")
            assert waiting.finish_reason == "suspended"
            await app.interrupt(waiting.run_id)
            await _write(app, waiting.run_id, f"{prefix}interrupt-waiting.json")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
