"""Records the history of a run whose calls were assigned to approvers, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_approvers PREFIX`` writes ``PREFIXapprovers-edit.json``: two calls wait for
approval, assigned to ``alice`` and ``group:finance``; a signal from someone else is refused (journaled), the first
call is approved by alice with changed arguments (the ``approved-arguments`` patch: it runs with them), the second is
declined by a member of the group. Never re-record to make a failing replay pass.
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
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes

HERE = Path(__file__).parent
RUN_ID = "approvers-edit"
SCHEMA = {"type": "object", "properties": {"amount": {"type": "integer", "minimum": 1}}, "required": ["amount"]}


async def main(prefix: str) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall("pay", {"amount": 900}, id="pay-1"),
                    ScriptedToolCall("pay", {"amount": 50}, id="pay-2"),
                ]
            ),
            ScriptedResponse(text="One paid, one not."),
        ]
    )
    pay = create_tool(
        id="pay",
        description="Pays",
        input_schema=SCHEMA,
        execute=lambda d: {"paid": d["amount"]},
        require_approval=True,
        approvers=["alice", "group:finance"],
    )
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[Agent(id="payer", model=model, tools={"pay": pay})],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
            groups={"carol": ["finance"]},
        )
        async with app.worker():
            first = await app.agent("payer").generate("pay both", run_id=RUN_ID)
            assert first.finish_reason == "suspended"
            await app.signal_resume(RUN_ID, {"approved": True}, tool_call_id="pay-1", answered_by="mallory")
            await app.approve_tool_call(
                "payer", run_id=RUN_ID, tool_call_id="pay-1", answered_by="alice", args={"amount": 450}
            )
            stream = await app.decline_tool_call("payer", run_id=RUN_ID, tool_call_id="pay-2", answered_by="carol")
            await stream.result()
            handle = env.client.get_workflow_handle(RUN_ID)
            await handle.result()
            history = await handle.fetch_history()
            (HERE / f"{prefix}{RUN_ID}.json").write_text(history.to_json())
            print(f"wrote tests/histories/{prefix}{RUN_ID}.json ({len(history.events)} events)")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
