"""Records the committed histories replayed by tests/durability/test_replay.py.

Run ``python -m tests.histories.record PREFIX [--local]`` after an intentional, patched change to
AgentRunWorkflow: it writes ``PREFIX<name>.json`` beside the histories of earlier versions, which stay and keep
replaying (their runs take the unpatched path). Never re-record to make a failing replay pass.

The files without a prefix were recorded before segments were closed by activities; ``v2-`` after; ``v3-`` with
``--local``: every tool, and the planner's model steps, declared ``ActivityOptions(local=True)`` (local
activities).
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
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.agent import AgentMode
from tempo_agents.signals import TaskSignalProvider
from tempo_agents.tools import submit_plan_tool
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes

HERE = Path(__file__).parent


async def charge(data: dict[str, Any], ctx: ToolContext) -> Any:
    assert ctx.suspend is not None
    if ctx.resume_data is None:
        return await ctx.suspend({"phase": "confirm", "amount": data["amount"]})
    return {"charged": data["amount"] if ctx.resume_data.get("confirmed") else 0}


def agents(local: bool = False) -> list[Agent]:
    short = ActivityOptions(local=True) if local else None
    suspend_model = ScriptedModel(
        [
            ScriptedResponse(text="Charging.", tool_calls=[ScriptedToolCall("charge", {"amount": 990}, id="call-1")]),
            ScriptedResponse(text="Charged."),
        ]
    )
    approval_model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall("delete", {"path": "a"}, id="del-a"),
                    ScriptedToolCall("delete", {"path": "b"}, id="del-b"),
                ]
            ),
            ScriptedResponse(text="One deleted, one kept."),
        ]
    )
    delete = create_tool(
        id="delete",
        description="Deletes a file",
        execute=lambda d: f"deleted {d['path']}",
        require_approval=True,
        activity=short,
    )
    planner_model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("submit_plan", {"path": ".plans/p.md"}, id="plan-1")]),
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall(
                        "task_write",
                        {"tasks": [{"content": "Do it", "status": "in_progress", "activeForm": "Doing it"}]},
                        id="tw",
                    )
                ]
            ),
            ScriptedResponse(tool_calls=[ScriptedToolCall("task_complete", {"id": "task_do_it"}, id="tc")]),
            ScriptedResponse(text="Done."),
        ]
    )
    planner = Agent(
        id="planner",
        model=planner_model,
        tools={"submit_plan": submit_plan_tool},
        signals=[TaskSignalProvider()],
        modes=[AgentMode(id="plan", transitions_to="build"), AgentMode(id="build")],
        model_step_activity=short,
    )
    return [
        planner,
        Agent(
            id="suspender",
            model=suspend_model,
            tools={"charge": create_tool(id="charge", description="Charges", execute=charge, activity=short)},
        ),
        Agent(id="approver", model=approval_model, tools={"delete": delete}),
    ]


async def main(prefix: str, local: bool) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=agents(local),
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with app.worker():
            first = await app.agent("suspender").generate("charge me", run_id="suspend-resume")
            await app.agent("suspender").resume_generate({"confirmed": True}, run_id=first.run_id)
            second = await app.agent("approver").generate("delete both", run_id="approve-decline")
            await app.agent("approver").approve_tool_call_generate(run_id=second.run_id, tool_call_id="del-a")
            await app.agent("approver").decline_tool_call_generate(run_id=second.run_id, tool_call_id="del-b")
            third = await app.agent("planner").generate(
                "plan and build", run_id="plan-tasks", memory={"thread": "t", "resource": "u"}
            )
            await app.agent("planner").resume_generate({"action": "approved"}, run_id=third.run_id)
            for run_id in (first.run_id, second.run_id, third.run_id):
                handle = app.client.get_workflow_handle(run_id)
                await handle.result()  # the journal's finish is written just before the workflow closes
                history = await handle.fetch_history()
                (HERE / f"{prefix}{run_id}.json").write_text(history.to_json())
                print(f"wrote tests/histories/{prefix}{run_id}.json ({len(history.events)} events)")
    await env.shutdown()


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--local"]
    asyncio.run(main(arguments[0] if arguments else "", "--local" in sys.argv[1:]))
