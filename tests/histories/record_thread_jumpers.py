"""Records the history of a thread's workflow with interrupters, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_thread_jumpers`` writes ``thread-jumpers.json``: a first run, a second message
queued behind it, then two ``interrupt`` messages, each queued behind the interrupters before it and ahead of the
queued one (the ``thread-jumpers-in-arrival-order`` patch), all four runs in that order. Never re-record to make a
failing replay pass.
"""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from pathlib import Path

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.threads.operations import thread_workflow_id
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes

HERE = Path(__file__).parent
MEMORY = {"thread": "t1", "resource": "u1"}


async def main() -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    gate = asyncio.Event()

    async def respond(request: object) -> ScriptedResponse:
        await gate.wait()
        return ScriptedResponse(text="noted")

    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[Agent(id="chat", model=ScriptedModel(respond))],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with app.worker():
            streams = [
                await app.stream("chat", "one", memory=MEMORY, run_id="jump-run-1"),
                await app.stream("chat", "two", memory=MEMORY, run_id="jump-run-2"),
                await app.stream("chat", "three", memory=MEMORY, run_id="jump-run-3", thread_strategy="interrupt"),
                await app.stream("chat", "four", memory=MEMORY, run_id="jump-run-4", thread_strategy="interrupt"),
            ]
            gate.set()
            for stream in streams:
                await stream.result()
            handle = env.client.get_workflow_handle(thread_workflow_id(app.task_queue, "u1", "t1"))
            while len((await app.thread("t1", resource_id="u1")).done) < len(streams):
                await asyncio.sleep(0.05)
            history = await handle.fetch_history()
            (HERE / "thread-jumpers.json").write_text(history.to_json())
            print(f"wrote tests/histories/thread-jumpers.json ({len(history.events)} events)")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
