"""Agent runs run outside Temporal's sandbox by default; ``sandboxed_runs`` puts them back in it.

(ARCHITECTURE.md, "Durable-execution rules" 1.) The replay tests replay every committed history inside the
sandbox too; here the switch is shown to apply the sandbox's restrictions to a workflow defined
``sandboxed=False``, and an agent run with a suspension, an approval and a local tool to complete inside it.
"""

from __future__ import annotations

import asyncio
import datetime
import uuid
from typing import Any

import pytest
from pydantic import BaseModel
from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.worker import TempoAgentsPlugin
from tempo_agents.worker.plugin import SANDBOXED_RUNS_VARIABLE
from tests.conftest import AppFactory


@workflow.defn(name="ReadsTheClock", sandboxed=False)
class ReadsTheClock:
    """Workflow code that reads the wall clock: non-deterministic, which the sandbox refuses at runtime."""

    @workflow.run
    async def run(self) -> str:
        return datetime.datetime.now().isoformat()


async def _task_failure(client: Client, workflow_id: str) -> str | None:
    """The first workflow task failure's message, waiting up to 10 s for one; None if the workflow completed."""
    handle = client.get_workflow_handle(workflow_id)
    for _ in range(200):
        async for event in handle.fetch_history_events():
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
                return str(event.workflow_task_failed_event_attributes.failure.message)
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
                return None
        await asyncio.sleep(0.05)
    raise AssertionError("the workflow neither completed nor failed a task within 10 s")


@pytest.mark.parametrize("sandboxed_runs", [False, True])
async def test_the_switch_applies_the_sandbox_to_workflows_defined_outside_it(
    client: Client, sandboxed_runs: bool
) -> None:
    task_queue = f"tq-{uuid.uuid4()}"
    plugin = TempoAgentsPlugin(sandboxed_runs=sandboxed_runs)
    async with Worker(client, task_queue=task_queue, workflows=[ReadsTheClock], plugins=[plugin]):
        workflow_id = f"clock-{uuid.uuid4()}"
        await client.start_workflow(ReadsTheClock.run, id=workflow_id, task_queue=task_queue)
        failure = await _task_failure(client, workflow_id)
        if failure is not None:  # a task that fails is retried for ever: stop it
            await client.get_workflow_handle(workflow_id).terminate()
    if sandboxed_runs:
        assert failure is not None and "datetime.datetime.now" in failure
    else:
        assert failure is None


def test_the_environment_variable_turns_the_switch_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SANDBOXED_RUNS_VARIABLE, raising=False)
    assert TempoAgentsPlugin().sandboxed_runs is False
    monkeypatch.setenv(SANDBOXED_RUNS_VARIABLE, "1")
    assert TempoAgentsPlugin().sandboxed_runs is True
    assert TempoAgentsPlugin(sandboxed_runs=False).sandboxed_runs is False


class Amount(BaseModel):
    amount: int


class Confirm(BaseModel):
    confirmed: bool


async def _charge(data: Amount, ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"amount": data.amount})
    return {"charged": data.amount if ctx.resume_data["confirmed"] else 0}


async def _rate(data: Amount) -> dict[str, float]:
    return {"rate": data.amount / 100}


async def test_an_agent_run_suspends_asks_and_resumes_inside_the_sandbox(make_app: AppFactory) -> None:
    agent = Agent(
        id="sandboxed",
        model=ScriptedModel(
            [
                ScriptedResponse(tool_calls=[ScriptedToolCall("rate", {"amount": 250})]),
                ScriptedResponse(tool_calls=[ScriptedToolCall("charge", {"amount": 250}, id="charge-1")]),
                ScriptedResponse(tool_calls=[ScriptedToolCall("refund", {"amount": 5}, id="refund-1")]),
                ScriptedResponse(text="Charged 250, refunded 5."),
            ]
        ),
        tools={
            "rate": create_tool(
                id="rate", description="Rate", input_schema=Amount, execute=_rate, activity=ActivityOptions(local=True)
            ),
            "charge": create_tool(
                id="charge", description="Charge", input_schema=Amount, resume_schema=Confirm, execute=_charge
            ),
            "refund": create_tool(
                id="refund",
                description="Refund",
                input_schema=Amount,
                execute=_rate,
                require_approval=True,
            ),
        },
    )
    app = make_app([agent])
    async with app.worker(sandboxed_runs=True):
        first = await app.agent("sandboxed").generate("Charge 250.")
        second = await app.agent("sandboxed").resume_generate({"confirmed": True}, run_id=first.run_id)
        third = await app.agent("sandboxed").approve_tool_call_generate(run_id=first.run_id)
        await app.client.get_workflow_handle(first.run_id).result()

    assert first.finish_reason == "suspended"
    assert [r.payload.result for r in first.tool_results] == [{"rate": 2.5}]
    assert second.finish_reason == "suspended"  # now waiting for the refund's approval
    assert [r.payload.result for r in second.tool_results] == [{"charged": 250}]
    assert third.finish_reason == "stop"
    assert [r.payload.result for r in third.tool_results] == [{"rate": 0.05}]
    assert third.text == "Charged 250, refunded 5."
