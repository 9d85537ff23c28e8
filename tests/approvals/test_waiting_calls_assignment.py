"""``WaitingCalls`` alone (no server): who may answer an assigned call, re-assignment, answers bound to a round,
and changed arguments, in the words and codes every client is shown."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from temporalio.exceptions import ApplicationError

from tempo_agents.workflows.payloads import (
    ResumeRequest,
    RunOptions,
    Suspension,
    ToolCallInput,
    ToolCallRequest,
    ToolCallResult,
)
from tempo_agents.workflows.resume_errors import INVALID_ARGS, NOT_AN_APPROVER, TOOL_CALL_NOT_SUSPENDED
from tempo_agents.workflows.waiting_calls import WaitingCalls

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
ARGS_SCHEMA = json.dumps(
    {"type": "object", "properties": {"amount": {"type": "integer", "minimum": 1}}, "required": ["amount"]}
)


def waiting(approvers: list[str], *, kind: str = "approval", round: int = 0) -> WaitingCalls:
    calls = WaitingCalls([], clock=lambda: T0, keeps_options=lambda: True, refusals_counted=lambda: True)
    call_input = ToolCallInput(
        run_id="run-1",
        agent_id="agent-1",
        step=1,
        call=ToolCallRequest(tool_call_id="call-1", tool_name="pay", args={"amount": 900}),
        options=RunOptions(),
        round=round,
    )
    suspension = Suspension.model_validate(
        {"kind": kind, "toolId": "pay", "approvers": approvers, "argsSchema": ARGS_SCHEMA if kind == "approval" else ""}
    )
    calls.call_ended(call_input, ToolCallResult(status="suspended", suspension=suspension), T0)
    return calls


def refusal(calls: WaitingCalls, request: ResumeRequest) -> ApplicationError:
    with pytest.raises(ApplicationError) as validated:
        calls.validate(request)
    refused = calls.signal(request)  # the signal path decides the same
    assert refused is not None
    assert (refused.type, refused.message) == (validated.value.type, validated.value.message)
    return validated.value


def test_only_the_assigned_principals_and_members_of_the_assigned_groups_may_answer() -> None:
    calls = waiting(["alice", "group:finance"])
    for outsider in (
        ResumeRequest(action="approve", answered_by="mallory"),
        ResumeRequest(action="approve", answered_by="mallory", answered_by_groups=["ops"]),
        ResumeRequest(action="approve"),
    ):
        error = refusal(calls, outsider)
        assert error.type == NOT_AN_APPROVER
        assert error.message == 'tool call "call-1" may be answered only by alice, group:finance'
    calls.validate(ResumeRequest(action="approve", answered_by="alice"))
    calls.validate(ResumeRequest(action="decline", answered_by="carol", answered_by_groups=["finance"]))
    assert calls.signal(ResumeRequest(action="approve", answered_by="carol", answered_by_groups=["finance"])) is None
    assert [(a.action, a.answered_by) for a in calls.answers()] == [("approve", "carol")]


def test_an_unassigned_call_takes_anyone_and_a_reassigned_call_takes_only_the_new_approvers() -> None:
    calls = waiting([])
    calls.validate(ResumeRequest(action="approve"))
    calls.set_approvers("call-1", ["dave"])
    assert calls.pending()[0].approvers == ["dave"]
    error = refusal(calls, ResumeRequest(action="approve", answered_by="alice"))
    assert error.message == 'tool call "call-1" may be answered only by dave'
    calls.validate(ResumeRequest(action="approve", answered_by="dave"))


def test_an_answer_for_another_round_is_refused() -> None:
    calls = waiting([], round=2)
    error = refusal(calls, ResumeRequest(action="approve", tool_call_id="call-1", round=1))
    assert error.type == TOOL_CALL_NOT_SUSPENDED
    calls.validate(ResumeRequest(action="approve", tool_call_id="call-1", round=2))


def test_changed_arguments_are_checked_against_the_input_schema_and_only_with_an_approval() -> None:
    calls = waiting([])
    error = refusal(calls, ResumeRequest(action="approve", args={"amount": 0}))
    assert error.type == INVALID_ARGS
    assert error.message.startswith("Tool input validation failed for pay")
    assert "amount: 0 is less than the minimum of 1" in error.message
    declined = refusal(calls, ResumeRequest(action="decline", args={"amount": 5}))
    assert (
        declined.message
        == 'tool call "call-1": arguments can be changed only when approving a call that waits for approval'
    )
    calls.accept(ResumeRequest(action="approve", args={"amount": 450}, answered_by="alice"))
    [(call, resolution)] = calls.take_resolved()
    assert (resolution.args, resolution.args_before, resolution.answered_by) == (
        {"amount": 450},
        {"amount": 900},
        "alice",
    )
    assert call.args == {"amount": 900}


def test_arguments_cannot_be_changed_on_a_suspension() -> None:
    calls = waiting([], kind="suspension")
    error = refusal(calls, ResumeRequest(action="resume", data={"x": 1}, args={"amount": 5}))
    assert error.type == INVALID_ARGS


def test_the_arguments_of_a_call_without_a_carried_schema_cannot_be_changed() -> None:
    child_call = WaitingCalls([], clock=lambda: T0, keeps_options=lambda: True, refusals_counted=lambda: True)
    call_input = ToolCallInput(
        run_id="run-1",
        agent_id="agent-1",
        step=1,
        call=ToolCallRequest(tool_call_id="call-1", tool_name="agent-helper", args={"prompt": "pay"}),
        options=RunOptions(),
    )
    suspension = Suspension(kind="approval", tool_id="pay")
    child_call.call_ended(call_input, ToolCallResult(status="suspended", suspension=suspension), T0)
    error = refusal(child_call, ResumeRequest(action="approve", args={"prompt": "x"}))
    assert (error.type, error.message) == (INVALID_ARGS, 'tool call "call-1": its arguments cannot be changed')
    child_call.validate(ResumeRequest(action="approve"))
