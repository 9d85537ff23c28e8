"""Records the history of a run whose local tool refused an answer, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_refused PREFIX`` writes ``PREFIXresume-refused.json``: a tool declared
``ActivityOptions(local=True)`` suspends, an ``approve`` signal is refused by its resume schema
(``resume-rejected``), and the next answer runs it again as a local activity under keys of its own (the
``refused-resumes-run-anew`` patch). Never re-record to make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.payloads import ResumeRequest

HERE = Path(__file__).parent


class Confirm(BaseModel):
    confirmed: bool


async def confirm(data: dict[str, Any], ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"amount": data["amount"]})
    return {"charged": data["amount"] if ctx.resume_data["confirmed"] else 0}


async def main(prefix: str) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("confirm", {"amount": 12}, id="c-1")]),
            ScriptedResponse(text="Charged."),
        ]
    )
    tool = create_tool(
        id="confirm",
        description="Charges once confirmed",
        resume_schema=Confirm,
        execute=confirm,
        activity=ActivityOptions(local=True, maximum_attempts=3),
    )
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[Agent(id="cashier", model=model, tools={"confirm": tool})],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with app.worker():
            run_id = "resume-refused"
            await app.agent("cashier").generate("charge 12", run_id=run_id)
            await env.client.get_workflow_handle(run_id).signal("resume", ResumeRequest(action="approve"))
            while not any(
                entry.chunk.get("data", {}).get("kind") == "resume-rejected"
                for entry in await app.store.read_chunks(run_id)
            ) or not await app.pending(run_id):
                await asyncio.sleep(0.05)
            await app.agent("cashier").resume_generate({"confirmed": True}, run_id=run_id)
            handle = env.client.get_workflow_handle(run_id)
            await handle.result()
            history = await handle.fetch_history()
            (HERE / f"{prefix}{run_id}.json").write_text(history.to_json())
            print(f"wrote tests/histories/{prefix}{run_id}.json ({len(history.events)} events)")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
