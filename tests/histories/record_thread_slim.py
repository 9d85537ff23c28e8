"""Records the history of a thread that continues as new while a run waits, having yielded it, replayed by
tests/durability/test_replay.py.

``python -m tests.histories.record_thread_slim`` writes ``thread-slim-waiting.json``: the thread's first workflow
run, where a run waits for an approval and yields the thread, later messages start and end, and the thread continues
as new carrying the waiting run slim (no messages), behind the ``thread-carries-slim-waiting-runs`` patch. Never
re-record to make a failing replay pass.
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


async def main() -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
        dev_server_extra_args=["--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=20"],
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
            await app.generate("payments", "Pay Bob", memory=MEMORY, run_id="slim-run-1")
            while not (await app.thread("t1", resource_id="u1")).waiting:
                await asyncio.sleep(0.05)
            handle = env.client.get_workflow_handle(thread_workflow_id(app.task_queue, "u1", "t1"))
            began = (await handle.describe()).run_id
            n = 0
            while (await handle.describe()).run_id == began:
                n += 1
                await app.generate("payments", f"m{n}", memory=MEMORY, run_id=f"slim-run-{n + 1}")
                await asyncio.sleep(0.2)
            thread = await env.client.get_workflow_handle(handle.id, run_id=began).fetch_history()
            (HERE / "thread-slim-waiting.json").write_text(thread.to_json())
            print(f"wrote thread-slim-waiting.json ({len(thread.events)} events)")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
