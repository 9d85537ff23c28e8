"""Records the histories of a thread whose run yields it while it waits, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_thread_yield`` writes ``thread-yield.json`` (the thread's workflow: its first run
waits for an approval and yields the thread, a second message starts at once and ends, the approval's continuation
asks for its turn and is given the go-ahead) and ``v5-thread-yield-run.json`` (that first run: it tells its thread
that it waits, then that it was answered, waits for the go-ahead, reads what was said meanwhile in its next model
step, and tells its thread that it ended). Never re-record to make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from pathlib import Path

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.threads.operations import thread_workflow_id
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes

HERE = Path(__file__).parent
MEMORY = {"thread": "t1", "resource": "u1"}


def script(request: ModelRequest) -> ScriptedResponse:
    last = request.messages[-1]
    if last.role == "user" and last.text == "Pay Bob" and request.step == 0:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"to": "Bob"})])
    return ScriptedResponse(text="noted" if request.step == 0 else "paid")


async def until(app: App, check: str) -> None:
    while True:
        view = await app.thread("t1", resource_id="u1")
        if (check == "waiting" and view.waiting) or (check == "idle" and not view.active and not view.waiting):
            return
        await asyncio.sleep(0.05)


async def main() -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    pay = create_tool(id="pay", description="Pays", execute=lambda data: "paid Bob", require_approval=True)
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[Agent(id="payments", model=ScriptedModel(script), tools={"pay": pay})],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with app.worker():
            first = await app.generate("payments", "Pay Bob", memory=MEMORY, run_id="yield-run-1")
            await until(app, "waiting")
            await app.generate("payments", "one", memory=MEMORY, run_id="yield-run-2", thread_strategy="reject")
            await until(app, "waiting")
            answered = await app.approve_tool_call("payments", run_id=first.run_id)
            assert await answered.text == "paid"
            await env.client.get_workflow_handle(first.run_id).result()
            await until(app, "idle")
            thread = await env.client.get_workflow_handle(
                thread_workflow_id(app.task_queue, "u1", "t1")
            ).fetch_history()
            run = await env.client.get_workflow_handle(first.run_id).fetch_history()
            (HERE / "thread-yield.json").write_text(thread.to_json())
            (HERE / "v5-thread-yield-run.json").write_text(run.to_json())
            print(
                f"wrote thread-yield.json ({len(thread.events)} events), v5-thread-yield-run.json ({len(run.events)})"
            )
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
