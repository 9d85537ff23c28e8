"""Records the history of a thread's workflow, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_thread`` writes ``thread-queue.json``: the first run of a thread (its workflow
started by the update-with-start that sends it), a second message queued behind it, a third queued then taken out
of the queue, a fourth refused (``reject``), then, when the first run ended, the workflow continued as new with the
second still queued (the server suggests it after a few events; the queue travels in its input). Never re-record to
make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import uuid
from pathlib import Path

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.errors import ThreadBusyError
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
        dev_server_extra_args=["--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=20"],
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
            first = await app.stream("chat", "one", memory=MEMORY, run_id="thread-run-1")
            second = await app.stream("chat", "two", memory=MEMORY, run_id="thread-run-2")
            await app.stream("chat", "three", memory=MEMORY, run_id="thread-run-3")
            assert await app.cancel_queued_run("t1", "thread-run-3", resource_id="u1")
            with contextlib.suppress(ThreadBusyError):
                await app.stream("chat", "four", memory=MEMORY, run_id="thread-run-4", thread_strategy="reject")
            gate.set()
            await first.result()
            await second.result()
            workflow_id = thread_workflow_id(app.task_queue, "u1", "t1")
            run_id: str | None = (await env.client.get_workflow_handle(workflow_id).describe()).run_id
            while run_id:  # back to the first run of the chain
                history = await env.client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
                run_id = history.events[0].workflow_execution_started_event_attributes.continued_execution_run_id
            (HERE / "thread-queue.json").write_text(history.to_json())
            print(f"wrote tests/histories/thread-queue.json ({len(history.events)} events)")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
