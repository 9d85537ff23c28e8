"""Workflows as tools (reference §5.2): ``workflow-<key>`` runs any Temporal workflow as a child workflow."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, WorkflowTool, wait_for_resume
from tempo_agents.journal.chunks import ToolCallSuspendedChunk, ToolResultChunk
from tests.conftest import AppFactory, closed_history, running_worker


class FindUserInput(BaseModel):
    name: str


class User(BaseModel):
    id: int
    name: str


@workflow.defn(name="FindUser")
class FindUserWorkflow:
    """Finds a user by name."""

    @workflow.run
    async def run(self, data: FindUserInput) -> User:
        if data.name == "nobody":
            raise ApplicationError("no user named nobody", non_retryable=True)
        return User(id=7, name=data.name.title())


@workflow.defn(name="RefundWithApproval")
class RefundWorkflow:
    @workflow.run
    async def run(self, data: dict[str, Any]) -> dict[str, Any]:
        answer = await wait_for_resume(
            {"refund": data["amount"]},
            resume_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        )
        return {"refunded": data["amount"] if answer["ok"] else 0}


@workflow.defn(name="Greeter")
class GreeterWorkflow:
    """Served on another task queue by a plain Temporal worker; the agent knows it by name only."""

    @workflow.run
    async def run(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"greeting": f"hello {data['who']}"}


def calling(*calls: ScriptedToolCall) -> ScriptedModel:
    return ScriptedModel([ScriptedResponse(tool_calls=list(calls)), ScriptedResponse(text="Done.")])


async def test_a_workflow_tool_returns_its_result_or_its_failure(make_app: AppFactory) -> None:
    model = calling(
        ScriptedToolCall("workflow-find_user", {"inputData": {"name": "ada"}}, id="ok"),
        ScriptedToolCall("workflow-find_user", {"inputData": {"name": "nobody"}}, id="bad"),
    )
    agent = Agent(id="finder", model=model, workflows={"find_user": FindUserWorkflow})
    tool = agent.tools["workflow-find_user"]
    assert tool.description == "Finds a user by name."
    schema = tool.model_input_schema()
    assert schema["required"] == ["inputData"]
    assert schema["properties"]["inputData"]["properties"]["name"]["type"] == "string"
    app = make_app([agent])
    async with running_worker(app):
        result = await app.agent("finder").generate("find")
        results = {c.payload.tool_call_id: c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk)}
        run_id = result.run_id
        assert results["ok"] == {"result": {"id": 7, "name": "Ada"}, "runId": f"{run_id}-ok"}
        assert results["bad"] == {"error": "no user named nobody", "runId": f"{run_id}-bad"}
        # the model sees the whole object
        seen = [part.result for message in model.requests[1].messages for part in message.tool_results]
        assert {"result": {"id": 7, "name": "Ada"}, "runId": f"{run_id}-ok"} in seen
        child = await app.client.get_workflow_handle(f"{run_id}-ok").describe()
        assert child.parent_id == run_id
        history = await closed_history(app.client, run_id)
        print(f"parent {run_id}: {len(history.events)} events")


async def test_a_workflow_that_waits_suspends_the_call_until_resumed_through_the_parent(make_app: AppFactory) -> None:
    agent = Agent(
        id="refunder",
        model=calling(ScriptedToolCall("workflow-refund", {"inputData": {"amount": 30}}, id="rf")),
        workflows={"refund": RefundWorkflow},
    )
    app = make_app([agent])
    async with running_worker(app):
        first = await app.agent("refunder").generate("refund")
        assert first.finish_reason == "suspended"
        suspended = [c for c in first.chunks if isinstance(c, ToolCallSuspendedChunk)]
        assert [(c.payload.tool_name, c.payload.suspend_payload) for c in suspended] == [
            ("workflow-refund", {"refund": 30})
        ]
        pending = await app.pending(first.run_id, settle_seconds=60)
        assert [p.tool_name for p in pending] == ["workflow-refund"]
        resumed = await app.agent("refunder").resume_generate({"ok": True}, run_id=first.run_id)
        results = [c.payload.result for c in resumed.chunks if isinstance(c, ToolResultChunk)]
        assert results == [{"result": {"refunded": 30}, "runId": f"{first.run_id}-rf"}]
        assert resumed.text == "Done."


async def test_a_workflow_known_by_name_runs_on_its_own_task_queue(make_app: AppFactory, client: Client) -> None:
    other_queue = f"greeters-{uuid.uuid4()}"
    greeter = WorkflowTool(
        name="Greeter",
        task_queue=other_queue,
        description="Greets someone",
        input_schema={"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
        output_schema={"type": "object", "properties": {"greeting": {"type": "string"}}},
    )
    agent = Agent(
        id="greeting",
        model=calling(ScriptedToolCall("workflow-greet", {"inputData": {"who": "bob"}}, id="g")),
        workflows={"greet": greeter},
    )
    app = make_app([agent])
    # a plain Temporal worker (default data converter, no tempo-agents plugin), as another language's would be
    plain_worker = Worker(
        client, task_queue=other_queue, workflows=[GreeterWorkflow], workflow_runner=UnsandboxedWorkflowRunner()
    )
    async with running_worker(app), plain_worker:
        result = await app.agent("greeting").generate("greet bob")
        results = [c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk)]
        assert results == [{"result": {"greeting": "hello bob"}, "runId": f"{result.run_id}-g"}]


async def test_approval_applies_to_workflow_tools_like_any_other(make_app: AppFactory) -> None:
    agent = Agent(
        id="careful-finder",
        model=calling(ScriptedToolCall("workflow-find_user", {"inputData": {"name": "grace"}}, id="f")),
        workflows={"find_user": FindUserWorkflow},
    )
    app = make_app([agent])
    async with running_worker(app):
        first = await app.agent("careful-finder").generate("find", require_tool_approval=True)
        assert first.finish_reason == "suspended"
        assert [(p.tool_name, p.requires_approval) for p in await app.pending(first.run_id, settle_seconds=60)] == [
            ("workflow-find_user", True)
        ]
        after = await app.agent("careful-finder").approve_tool_call_generate(run_id=first.run_id)
        results = [c.payload.result for c in after.chunks if isinstance(c, ToolResultChunk)]
        assert results == [{"result": {"id": 7, "name": "Grace"}, "runId": f"{first.run_id}-f"}]
