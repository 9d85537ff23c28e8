"""Records the parent-with-child histories replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_children PREFIX`` writes ``PREFIX<name>.json``: a run whose sub-agent
suspends and is resumed through it (``sub-agent-parent``), that sub-agent's own run (``sub-agent-child``),
and a run whose workflow tool waits for a person (``workflow-tool-parent``). Never re-record to make a
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

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes
from tests.histories.refund_workflow import RecordedRefundWorkflow

HERE = Path(__file__).parent


async def confirm(data: dict[str, Any], ctx: ToolContext) -> Any:
    assert ctx.suspend is not None
    if ctx.resume_data is None:
        return await ctx.suspend({"question": f"pay {data['amount']}?"})
    return {"paid": data["amount"] if ctx.resume_data.get("ok") else 0}


def agents() -> list[Agent]:
    clerk = Agent(
        id="clerk",
        description="Pays invoices",
        model=ScriptedModel(
            [
                ScriptedResponse(tool_calls=[ScriptedToolCall("confirm", {"amount": 12}, id="pay")]),
                ScriptedResponse(text="Paid 12."),
            ]
        ),
        tools={"confirm": create_tool(id="confirm", description="Pays after a yes", execute=confirm)},
    )
    lead = Agent(
        id="lead",
        model=ScriptedModel(
            [
                ScriptedResponse(tool_calls=[ScriptedToolCall("agent-clerk", {"prompt": "pay it"}, id="k1")]),
                ScriptedResponse(text="The clerk paid."),
            ]
        ),
        agents={"clerk": clerk},
    )
    refunder = Agent(
        id="refunder",
        model=ScriptedModel(
            [
                ScriptedResponse(
                    tool_calls=[ScriptedToolCall("workflow-refund", {"inputData": {"amount": 5}}, id="r")]
                ),
                ScriptedResponse(text="Refunded."),
            ]
        ),
        workflows={"refund": RecordedRefundWorkflow},
    )
    return [lead, refunder]


async def main(prefix: str) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=agents(), store=f"sqlite:///{folder}/store.db", task_queue=f"tq-{uuid.uuid4()}", client=env.client
        )
        async with app.worker():
            first = await app.agent("lead").generate("pay the invoice", run_id="sub-agent-parent")
            await app.agent("lead").resume_generate({"ok": True}, run_id=first.run_id)
            second = await app.agent("refunder").generate("refund", run_id="workflow-tool-parent")
            await app.agent("refunder").resume_generate({"ok": True}, run_id=second.run_id)
            runs = {
                "sub-agent-parent": first.run_id,
                "sub-agent-child": f"{first.run_id}-k1",
                "workflow-tool-parent": second.run_id,
            }
            for name, run_id in runs.items():
                handle = app.client.get_workflow_handle(run_id)
                await handle.result()  # the journal's finish is written just before the workflow closes
                history = await handle.fetch_history()
                (HERE / f"{prefix}{name}.json").write_text(history.to_json())
                print(f"wrote tests/histories/{prefix}{name}.json ({len(history.events)} events)")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
