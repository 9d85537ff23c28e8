"""Suspension, resume and approval (reference §3) against a real Temporal dev server."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import pytest
from pydantic import BaseModel
from temporalio.client import WorkflowExecutionStatus

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.approvals.policy import ApprovalRequest
from tempo_agents.errors import ResumeError, ResumeValidationError
from tempo_agents.journal.chunks import ToolCallApprovalChunk, ToolCallSuspendedChunk, ToolOutputDeniedChunk
from tempo_agents.workflows import search_attributes
from tests.conftest import AppFactory, running_worker


class ChargeIn(BaseModel):
    amount: int


class Confirm(BaseModel):
    confirmed: bool


class ChargeSuspend(BaseModel):
    phase: str
    amount: int


def charge_tool(calls: list[dict[str, Any]]) -> Any:
    async def execute(data: ChargeIn, ctx: ToolContext) -> Any:
        calls.append({"resume_data": ctx.resume_data, "suspend_payload": ctx.suspend_payload})
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            return await ctx.suspend({"phase": "confirm", "amount": data.amount})
        if not ctx.resume_data["confirmed"]:
            return {"charged": 0}
        return {"charged": data.amount}

    return create_tool(
        id="charge-tool",
        description="Charges a card",
        input_schema=ChargeIn,
        suspend_schema=ChargeSuspend,
        resume_schema=Confirm,
        execute=execute,
    )


def scripted(*calls: ScriptedToolCall, final: str = "Done.") -> ScriptedModel:
    return ScriptedModel([ScriptedResponse(tool_calls=list(calls)), ScriptedResponse(text=final)])


async def test_suspend_then_resume_without_tool_call_id(make_app: AppFactory) -> None:
    calls: list[dict[str, Any]] = []
    agent = Agent(
        id="pay",
        model=scripted(ScriptedToolCall("charge", {"amount": 990}, id="call-1")),
        tools={"charge": charge_tool(calls)},
    )
    app = make_app([agent])
    async with running_worker(app):
        first = await app.agent("pay").generate("charge me")
        suspended = [c for c in first.chunks if isinstance(c, ToolCallSuspendedChunk)]
        handle = app.client.get_workflow_handle(first.run_id)
        for _ in range(300):  # the tool activity has journaled the end; its completion may still be in flight
            description = await handle.describe()
            status = description.typed_search_attributes.get(search_attributes.STATUS)
            if not description.raw_description.pending_activities and status == "suspended":
                break
            await asyncio.sleep(0.05)

        resumed = await app.agent("pay").resume_generate({"confirmed": True}, run_id=first.run_id)
        await handle.result()  # the finish chunk is journaled by the last activity, just before the run closes
        final_status = (await handle.describe()).search_attributes

    assert first.finish_reason == "suspended"
    assert first.tool_results == []
    assert first.suspend_payload == {
        "toolCallId": "call-1",
        "toolName": "charge",
        "args": {"amount": 990},
        "suspendPayload": {"phase": "confirm", "amount": 990},
    }
    (chunk,) = suspended
    wire = chunk.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert wire["type"] == "tool-call-suspended" and wire["from"] == "AGENT"
    assert wire["payload"]["toolCallId"] == "call-1"
    assert wire["payload"]["suspendPayload"] == {"phase": "confirm", "amount": 990}
    assert wire["payload"]["args"] == {"amount": 990}
    assert '"confirmed"' in wire["payload"]["resumeSchema"] and wire["payload"]["resumeSchema"].startswith("{")
    # While it waits, nothing runs.
    assert description.status == WorkflowExecutionStatus.RUNNING
    assert description.raw_description.pending_activities == []
    assert description.typed_search_attributes.get(search_attributes.STATUS) == "suspended"

    assert resumed.finish_reason == "stop"
    assert [r.payload.result for r in resumed.tool_results] == [{"charged": 990}]
    assert resumed.text == "Done."
    assert resumed.chunks[0].type == "start"
    assert calls == [
        {"resume_data": None, "suspend_payload": None},
        {"resume_data": {"confirmed": True}, "suspend_payload": {"phase": "confirm", "amount": 990}},
    ]
    assert final_status["TempoAgentStatus"] == ["completed"]


async def test_two_suspended_calls_need_ids_and_continue_when_both_resolved(make_app: AppFactory) -> None:
    calls: list[dict[str, Any]] = []
    model = scripted(
        ScriptedToolCall("charge", {"amount": 10}, id="a"), ScriptedToolCall("charge", {"amount": 20}, id="b")
    )
    app = make_app([Agent(id="Payments", model=model, tools={"charge": charge_tool(calls)})])
    async with running_worker(app):
        first = await app.agent("Payments").generate("two charges")
        assert first.finish_reason == "suspended"
        assert {c.payload.tool_call_id for c in first.chunks if isinstance(c, ToolCallSuspendedChunk)} == {"a", "b"}
        with pytest.raises(ResumeError) as ambiguous:
            await app.agent("Payments").resume_stream({"confirmed": True}, run_id=first.run_id)
        assert (
            str(ambiguous.value) == f'Agent "Payments" requires an exact toolCallId to resume runId "{first.run_id}".'
        )
        assert ambiguous.value.code == "AGENT_RESUME_AMBIGUOUS_TOOL_CALL"

        after_a = await app.agent("Payments").resume_generate(
            {"confirmed": True}, run_id=first.run_id, tool_call_id="a"
        )
        assert after_a.finish_reason == "suspended"
        assert [r.payload.result for r in after_a.tool_results] == [{"charged": 10}]
        assert len(model.requests) == 1  # the loop waits for every call
        pending = await app.pending(first.run_id)
        assert [p.tool_call_id for p in pending] == ["b"]

        after_b = await app.agent("Payments").resume_generate(
            {"confirmed": False}, run_id=first.run_id, tool_call_id="b"
        )
    assert after_b.finish_reason == "stop"
    assert [r.payload.result for r in after_b.tool_results] == [{"charged": 0}]
    seen = [p for m in model.requests[1].messages for p in m.tool_results]
    assert [(p.tool_call_id, p.result) for p in seen] == [("a", {"charged": 10}), ("b", {"charged": 0})]


class FindIn(BaseModel):
    name: str


def find_user_tool(counter: collections.Counter[str], require_approval: Any = True) -> Any:
    def execute(data: FindIn) -> dict[str, str]:
        counter["executions"] += 1
        return {"name": data.name, "email": "dero@example.test"}

    return create_tool(
        id="find-user-tool",
        description="Finds a user",
        input_schema=FindIn,
        execute=execute,
        require_approval=require_approval,
    )


async def test_decline_never_runs_the_tool(make_app: AppFactory) -> None:
    counter: collections.Counter[str] = collections.Counter()
    model = scripted(ScriptedToolCall("findUserTool", {"name": "Dero Israel"}))
    app = make_app([Agent(id="users", model=model, tools={"findUserTool": find_user_tool(counter)})])
    async with running_worker(app):
        first = await app.agent("users").generate("find Dero")
        assert first.finish_reason == "suspended"
        assert first.suspend_payload is not None and first.suspend_payload["toolName"] == "findUserTool"
        approval = next(c for c in first.chunks if c.type == "tool-call-approval")
        wire = approval.model_dump(mode="json", by_alias=True, exclude_none=True)["payload"]
        assert wire["resumeSchema"] == (
            '{"type":"object","properties":{"approved":{"type":"boolean","description":"Controls if the tool call is '
            'approved or not, should be true when approved and false when declined"}},"required":["approved"]}'
        )
        declined = await app.agent("users").decline_tool_call_generate(run_id=first.run_id)
    assert counter["executions"] == 0
    assert len(declined.tool_results) == 1
    assert declined.tool_results[0].payload.result == "Tool call was not approved by the user"
    denied = [c for c in declined.chunks if isinstance(c, ToolOutputDeniedChunk)]
    assert denied[0].payload.approval.approved is False
    assert denied[0].payload.approval.reason == "Tool call was not approved by the user"
    assert declined.finish_reason == "stop"
    seen = [p for m in model.requests[1].messages for p in m.tool_results]
    assert seen[0].result == "Tool call was not approved by the user"
    assert len(first.tool_calls) + len(declined.tool_calls) == 1


async def test_decline_with_reason_and_approve(make_app: AppFactory) -> None:
    counter: collections.Counter[str] = collections.Counter()
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("find", {"name": "A"}, id="x")]),
            ScriptedResponse(tool_calls=[ScriptedToolCall("find", {"name": "B"}, id="y")]),
            ScriptedResponse(text="ok"),
        ]
    )
    app = make_app([Agent(id="users2", model=model, tools={"find": find_user_tool(counter)})])
    async with running_worker(app):
        first = await app.agent("users2").generate("go")
        second = await (await app.agent("users2").decline_tool_call(run_id=first.run_id, reason="not today")).result()
        assert second.tool_results[0].payload.result == "not today"
        assert second.finish_reason == "suspended"
        third = await app.agent("users2").approve_tool_call_generate(run_id=first.run_id, tool_call_id="y")
    assert counter["executions"] == 1
    assert third.tool_results[0].payload.result == {"name": "B", "email": "dero@example.test"}
    assert third.finish_reason == "stop"


async def test_invalid_resume_data_is_rejected_and_nothing_is_lost(make_app: AppFactory) -> None:
    calls: list[dict[str, Any]] = []
    agent = Agent(
        id="pay2", model=scripted(ScriptedToolCall("charge", {"amount": 5})), tools={"charge": charge_tool(calls)}
    )
    app = make_app([agent])
    async with running_worker(app):
        first = await app.agent("pay2").generate("charge")
        with pytest.raises(ResumeValidationError) as invalid:
            await app.agent("pay2").resume_stream({"confirmed": "perhaps"}, run_id=first.run_id)
        assert str(invalid.value) == (
            "Tool input validation failed for charge-tool. Please fix the following errors and try again:\n"
            "- confirmed: 'perhaps' is not of type 'boolean'\n\n"
            'Provided arguments: {\n  "confirmed": "perhaps"\n}'
        )  # the workflow decides, against the JSON schema of the call's resume schema
        assert invalid.value.result["error"] is True
        assert [p.tool_call_id for p in await app.pending(first.run_id)] == ["call_0_0"]
        done = await app.agent("pay2").resume_generate({"confirmed": True}, run_id=first.run_id)
    assert done.finish_reason == "stop"
    assert [r.payload.result for r in done.tool_results] == [{"charged": 5}]
    assert len(calls) == 2


async def test_signal_with_invalid_data_is_journaled_and_does_not_consume(make_app: AppFactory) -> None:
    calls: list[dict[str, Any]] = []
    agent = Agent(
        id="pay3", model=scripted(ScriptedToolCall("charge", {"amount": 7})), tools={"charge": charge_tool(calls)}
    )
    app = make_app([agent])
    async with running_worker(app):
        first = await app.agent("pay3").generate("charge")
        await app.signal_resume(first.run_id, {"confirmed": True}, tool_call_id="nope")
        await app.signal_resume(first.run_id, {"confirmed": "maybe"})
        for _ in range(250):
            journal = [e.chunk for e in await app.store.read_chunks(first.run_id)]
            errors = [c for c in journal if c["type"] == "data-error"]
            waiting = [p.tool_call_id for p in await app.pending(first.run_id)]
            if len(errors) == 2 and waiting == ["call_0_0"]:
                break

            await asyncio.sleep(0.02)

        assert [e["data"]["kind"] for e in errors] == ["resume-rejected", "resume-rejected"]
        assert sorted(e["data"]["code"] for e in errors) == [
            "AGENT_RESUME_INVALID_DATA",
            "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED",
        ]
        assert [p.tool_call_id for p in await app.pending(first.run_id)] == ["call_0_0"]
        await app.signal_resume(first.run_id, {"confirmed": True})
        result = await app.client.get_workflow_handle(first.run_id).result()
    assert result["finishReason"] == "stop"
    assert [c["resume_data"] for c in calls] == [None, {"confirmed": True}]


async def test_tool_suspending_twice_in_a_row(make_app: AppFactory) -> None:
    seen: list[Any] = []

    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        seen.append((ctx.resume_data, ctx.suspend_payload))
        assert ctx.suspend is not None
        if ctx.resume_data is None:
            return await ctx.suspend({"question": "name?"})
        if "age" not in ctx.resume_data:
            return await ctx.suspend({"question": "age?", "name": ctx.resume_data["name"]})
        return f"{ctx.suspend_payload['name']} is {ctx.resume_data['age']}"

    tool = create_tool(id="profile", description="Builds a profile", execute=execute)
    app = make_app([Agent(id="rounds", model=scripted(ScriptedToolCall("profile", {})), tools={"profile": tool})])
    async with running_worker(app):
        first = await app.agent("rounds").generate("go")
        second = await app.agent("rounds").resume_generate({"name": "Dero"}, run_id=first.run_id)
        assert second.finish_reason == "suspended"
        assert second.suspend_payload is not None
        assert second.suspend_payload["suspendPayload"] == {"question": "age?", "name": "Dero"}
        third = await app.agent("rounds").resume_generate({"age": 25}, run_id=first.run_id)
    assert third.tool_results[0].payload.result == "Dero is 25"
    assert seen == [
        (None, None),
        ({"name": "Dero"}, {"question": "name?"}),
        ({"age": 25}, {"question": "age?", "name": "Dero"}),
    ]


async def test_approval_predicate_that_raises_requires_approval(make_app: AppFactory) -> None:
    counter: collections.Counter[str] = collections.Counter()

    def predicate(data: FindIn, ctx: ToolContext) -> bool:
        raise RuntimeError("policy service down")

    def only_admins(data: FindIn, ctx: ToolContext) -> bool:
        return data.name == "admin"

    tools = {"risky": find_user_tool(counter, predicate), "normal": find_user_tool(counter, only_admins)}
    model = scripted(
        ScriptedToolCall("risky", {"name": "x"}, id="r"), ScriptedToolCall("normal", {"name": "y"}, id="n")
    )
    app = make_app([Agent(id="pred", model=model, tools=tools)])
    async with running_worker(app):
        first = await app.agent("pred").generate("go")
    assert first.finish_reason == "suspended"
    assert [c.payload.tool_call_id for c in first.chunks if isinstance(c, ToolCallApprovalChunk)] == ["r"]
    assert [r.payload.tool_call_id for r in first.tool_results] == ["n"]
    assert counter["executions"] == 1


async def test_run_level_approval_and_named_policy(make_app: AppFactory) -> None:
    counter: collections.Counter[str] = collections.Counter()
    seen: list[ApprovalRequest] = []

    def policy(request: ApprovalRequest) -> bool:
        seen.append(request)
        return bool(request.args["name"] == "root")

    tools = {"find": find_user_tool(counter, False)}
    model = ScriptedModel(
        lambda r: (
            ScriptedResponse(tool_calls=[ScriptedToolCall("find", {"name": "root"})])
            if r.step == 0
            else ScriptedResponse(text="ok")
        )
    )
    app = make_app([Agent(id="runlevel", model=model, tools=tools)], approval_policies={"root-only": policy})
    async with running_worker(app):
        by_flag = await app.agent("runlevel").generate("go", require_tool_approval=True)
        by_policy = await app.agent("runlevel").generate(
            "go", require_tool_approval="root-only", request_context={"user": "u1"}
        )
        plain = await app.agent("runlevel").generate("go")
    assert (by_flag.finish_reason, by_policy.finish_reason, plain.finish_reason) == ("suspended", "suspended", "stop")
    assert seen[0].tool_name == "find" and seen[0].request_context == {"user": "u1"}
    assert counter["executions"] == 1


async def test_resume_error_texts(make_app: AppFactory) -> None:
    calls: list[dict[str, Any]] = []
    agent = Agent(
        id="errs",
        name="Errs Agent",
        model=scripted(ScriptedToolCall("charge", {"amount": 1})),
        tools={"charge": charge_tool(calls)},
    )
    app = make_app([agent])
    async with running_worker(app):
        with pytest.raises(ResumeError) as missing:
            await app.agent("errs").resume_stream({"confirmed": True}, run_id="no-such-run")
        first = await app.agent("errs").generate("go")
        with pytest.raises(ResumeError) as wrong_call:
            await app.agent("errs").resume_stream({"confirmed": True}, run_id=first.run_id, tool_call_id="zzz")
        await app.agent("errs").resume_generate({"confirmed": True}, run_id=first.run_id)
        with pytest.raises(ResumeError) as finished:
            await app.agent("errs").resume_generate({"confirmed": True}, run_id=first.run_id)
    assert str(missing.value) == (
        'Agent "Errs Agent" resume_stream() could not find a suspended run for runId "no-such-run". '
        "The run may have already completed, never suspended, or the runId is invalid. "
        "Ensure you are calling resume_stream() only with a runId from a currently-suspended run."
    )
    assert missing.value.code == "AGENT_RESUME_NO_SNAPSHOT_FOUND"
    assert str(wrong_call.value) == 'Agent "Errs Agent" cannot resume tool call "zzz" because it is not suspended.'
    assert wrong_call.value.code == "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED"
    assert str(finished.value) == (
        f'Agent "Errs Agent" resume_generate() cannot resume runId "{first.run_id}" because it is not suspended.'
    )


async def test_racing_resumes_exactly_one_wins(make_app: AppFactory) -> None:
    calls: list[dict[str, Any]] = []
    agent = Agent(
        id="race", model=scripted(ScriptedToolCall("charge", {"amount": 3})), tools={"charge": charge_tool(calls)}
    )
    app = make_app([agent])
    other = App(
        agents=[Agent(id="race", model=ScriptedModel([]), tools={"charge": charge_tool([])})],
        store=app.store.url,
        task_queue=app.task_queue,
        client=app.client,
    )
    async with running_worker(app):
        first = await app.agent("race").generate("go")
        outcomes = await asyncio.gather(
            app.agent("race").resume_generate({"confirmed": True}, run_id=first.run_id),
            other.agent("race").resume_generate({"confirmed": False}, run_id=first.run_id),
            return_exceptions=True,
        )
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    wins = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(wins) == 1 and len(errors) == 1
    assert isinstance(errors[0], ResumeError)
    assert errors[0].code in {"AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED", "AGENT_RESUME_NOT_SUSPENDED"}
    assert len(calls) == 2


async def test_pending_query_and_list_suspended_runs(make_app: AppFactory) -> None:
    calls: list[dict[str, Any]] = []
    counter: collections.Counter[str] = collections.Counter()
    tools = {"charge": charge_tool(calls), "find": find_user_tool(counter)}
    model = ScriptedModel(
        lambda r: (
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall("charge", {"amount": 4}, id="c1"),
                    ScriptedToolCall("find", {"name": "z"}, id="f1"),
                ]
            )
            if r.step == 0
            else ScriptedResponse(text="ok")
        )
    )
    app = make_app([Agent(id="lister", model=model, tools=tools)])
    async with running_worker(app):
        mine = await app.agent("lister").generate("go", memory={"thread": "thread-A", "resource": "user-1"})
        await app.agent("lister").generate("go", memory={"thread": "thread-B", "resource": "user-1"})
        pending = await app.pending(mine.run_id)
        listed = None
        for _ in range(300):
            listed = await app.list_suspended_runs(thread_id="thread-A", resource_id="user-1")
            if listed.total == 1:
                break
            await asyncio.sleep(0.05)
        for _ in range(300):  # visibility is eventually consistent (up to seconds on a loaded machine)
            by_user = await app.list_suspended_runs(resource_id="user-1", agent_id="lister")
            if by_user.total == 2:
                break
            await asyncio.sleep(0.05)
    assert [(p.tool_call_id, p.tool_name, p.requires_approval, p.args) for p in pending] == [
        ("c1", "charge", False, {"amount": 4}),
        ("f1", "find", True, {"name": "z"}),
    ]
    assert pending[0].suspend_payload == {"phase": "confirm", "amount": 4}
    assert pending[0].suspended_at is not None and pending[0].expires_at is None
    assert listed is not None and listed.total == 1
    run = listed.runs[0]
    assert (run.run_id, run.thread_id, run.resource_id, run.status) == (mine.run_id, "thread-A", "user-1", "suspended")
    wire = listed.model_dump(mode="json", by_alias=True)
    assert wire["runs"][0]["toolCalls"] == [
        {
            "toolCallId": "c1",
            "toolName": "charge",
            "args": {"amount": 4},
            "requiresApproval": False,
            "suspendPayload": {"phase": "confirm", "amount": 4},
        },
        {
            "toolCallId": "f1",
            "toolName": "find",
            "args": {"name": "z"},
            "requiresApproval": True,
            "suspendPayload": None,
        },
    ]
    assert by_user.total == 2


async def test_suspend_payload_failing_its_schema_becomes_the_result(make_app: AppFactory) -> None:
    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        assert ctx.suspend is not None
        return await ctx.suspend({"phase": 1})

    tool = create_tool(id="bad-suspend", description="d", suspend_schema=ChargeSuspend, execute=execute)
    app = make_app([Agent(id="badsusp", model=scripted(ScriptedToolCall("bad", {"x": 1})), tools={"bad": tool})])
    async with running_worker(app):
        result = await app.agent("badsusp").generate("go")
    assert result.finish_reason == "stop"
    assert result.tool_results[0].payload.result["message"] == (
        "Tool suspension data validation failed for bad-suspend. Please fix the following errors and try again:\n"
        "- phase: Input should be a valid string\n"
        "- amount: Field required\n\n"
        'Provided arguments: {\n  "phase": 1\n}'
    )
