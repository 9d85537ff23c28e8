"""Records the history of a fork, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_fork PREFIX`` writes ``PREFIXfork-reuse.json``: a run forked at its step 1 with
``reuse="tools"``, whose first model step copies its origin's transcript and whose two parallel calls are one reused
from the origin and one run. Never re-record to make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes

HERE = Path(__file__).parent


def respond(request: ModelRequest) -> ScriptedResponse:
    turn = sum(1 for message in request.messages if message.role == "assistant")
    if turn == 0:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"city": "Paris"}, id="p")])
    if turn == 1 and request.messages[-1].role == "user":  # the fork's edit
        return ScriptedResponse(
            tool_calls=[
                ScriptedToolCall("lookup", {"city": "Paris"}, id="p2"),
                ScriptedToolCall("lookup", {"city": "Oslo"}, id="o2"),
            ]
        )
    return ScriptedResponse(text="Done.")


async def main(prefix: str) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    lookup = create_tool(id="lookup", description="Weather", execute=lambda d: {"city": d["city"], "sky": "clear"})
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[Agent(id="travel", model=ScriptedModel(respond), tools={"lookup": lookup})],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with app.worker():
            original = await app.generate("travel", "Weather?", run_id="fork-origin")
            fork = await app.fork(original.run_id, at_step=1, messages="And Oslo?", reuse="tools", run_id="fork-reuse")
            await fork.result()
            handle = env.client.get_workflow_handle("fork-reuse")
            await handle.result()
            history = await handle.fetch_history()
            (HERE / f"{prefix}fork-reuse.json").write_text(history.to_json())
            print(f"wrote tests/histories/{prefix}fork-reuse.json ({len(history.events)} events)")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
