"""The life of a waiting call, decided by ``WaitingCalls`` alone (pure workflow state: no Temporal server).

The run tests (test_suspension, test_resume_clients, test_deadlines, test_auto_resume) drive the same class
through the workflow; these pin the decisions an answer gets, in the words and codes a client is shown.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from temporalio.exceptions import ApplicationError

from tempo_agents.activity_options import ActivityOptions
from tempo_agents.workflows.payloads import (
    MAX_CARRIED_ANSWERS,
    Answer,
    HandoffRequest,
    Resolution,
    ResumeRequest,
    RunOptions,
    Suspension,
    ToolCallInput,
    ToolCallRequest,
    ToolCallResult,
)
from tempo_agents.workflows.resume_errors import (
    AMBIGUOUS_TOOL_CALL,
    INVALID_APPROVAL,
    INVALID_RESUME_DATA,
    NOT_SUSPENDED,
    TOOL_CALL_NOT_SUSPENDED,
)
from tempo_agents.workflows.waiting_calls import WaitingCalls

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
CONFIRM_SCHEMA = json.dumps(
    {"type": "object", "properties": {"confirmed": {"type": "boolean"}}, "required": ["confirmed"]}
)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


class Patch:
    """The resumed-options patch check: counts how often it is asked."""

    def __init__(self, patched: bool) -> None:
        self.patched = patched
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.patched


def make_calls(
    *, patched: bool = True, answers: list[Answer] | None = None, refused_patch: Patch | None = None
) -> tuple[WaitingCalls, Clock, Patch]:
    clock, patch = Clock(), Patch(patched)
    refused = refused_patch or Patch(True)
    return WaitingCalls(answers or [], clock=clock, keeps_options=patch, refusals_counted=refused), clock, patch


def call_input(
    call_id: str, tool: str = "charge", *, index: int = 0, round: int = 0, activity: ActivityOptions | None = None
) -> ToolCallInput:
    return ToolCallInput(
        run_id="run-1",
        agent_id="agent-1",
        step=2,
        call=ToolCallRequest(tool_call_id=call_id, tool_name=tool, args={"amount": 5}, index=index, activity=activity),
        options=RunOptions(),
        round=round,
    )


def suspend(
    calls: WaitingCalls,
    call_id: str,
    tool: str = "charge",
    *,
    approval: bool = False,
    schema: str = "",
    expires_in: float | None = None,
    activity: ActivityOptions | None = None,
    index: int = 0,
) -> None:
    suspension = Suspension(
        kind="approval" if approval else "suspension",
        tool_id=f"{tool}-tool",
        suspend_payload={"ask": call_id},
        resume_schema=schema,
        expires_in_seconds=expires_in,
    )
    calls.batch_started([call_id])
    calls.batch_stopped()
    calls.call_ended(
        call_input(call_id, tool, index=index, activity=activity),
        ToolCallResult(status="suspended", suspension=suspension),
        T0,
    )


def refusal(calls: WaitingCalls, request: ResumeRequest) -> ApplicationError:
    with pytest.raises(ApplicationError) as raised:
        calls.accept(request)
    return raised.value


def test_an_answer_resolves_the_only_waiting_call_and_is_noted() -> None:
    calls, clock, _ = make_calls()
    assert not calls.any_waiting
    error = refusal(calls, ResumeRequest(data={"confirmed": True}))
    assert (error.type, error.message, error.non_retryable) == (NOT_SUSPENDED, "run is not suspended", True)

    suspend(calls, "call_0")
    assert [p.tool_call_id for p in calls.pending()] == ["call_0"]
    assert calls.pending()[0].suspend_payload == {"ask": "call_0"}
    clock.now = T0 + timedelta(minutes=3)
    assert calls.accept(ResumeRequest(data={"confirmed": True}, answered_by="ops")) == "call_0"

    assert calls.pending() == [] and calls.any_resolved and calls.any_waiting
    assert calls.answers() == [
        Answer(
            tool_call_id="call_0",
            tool_name="charge",
            action="resume",
            answered_by="ops",
            answered_at=clock.now,
            data={"confirmed": True},
        )
    ]
    [(waiting, resolution)] = calls.take_resolved()
    assert (waiting.tool_call_id, resolution.action, resolution.data) == ("call_0", "resume", {"confirmed": True})
    assert resolution.answered_by == "ops"
    assert not calls.any_waiting and not calls.any_resolved
    assert refusal(calls, ResumeRequest()).type == NOT_SUSPENDED


def test_an_answer_names_its_call_when_several_wait() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0")
    suspend(calls, "call_1", index=1)
    error = refusal(calls, ResumeRequest(data={}))
    assert (error.type, error.message) == (AMBIGUOUS_TOOL_CALL, "several calls are suspended")
    error = refusal(calls, ResumeRequest(tool_call_id="nope"))
    assert (error.type, error.message) == (TOOL_CALL_NOT_SUSPENDED, 'tool call "nope" is not suspended')

    assert calls.accept(ResumeRequest(tool_call_id="call_1", data=1)) == "call_1"
    error = refusal(calls, ResumeRequest(tool_call_id="call_1", data=2))
    assert error.type == TOOL_CALL_NOT_SUSPENDED  # answered once: the second answer finds it taken
    assert calls.accept(ResumeRequest(data=0)) == "call_0"  # the only one left open


def test_resolved_calls_are_taken_up_in_the_order_their_answers_came() -> None:
    calls, _, _ = make_calls()
    for n in range(3):
        suspend(calls, f"call_{n}", index=n)
    for call_id in ("call_2", "call_0", "call_1"):
        calls.accept(ResumeRequest(tool_call_id=call_id))
    assert [waiting.tool_call_id for waiting, _ in calls.take_resolved()] == ["call_2", "call_0", "call_1"]


def test_an_approval_request_takes_approve_decline_or_an_approved_flag() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0", approval=True)
    error = refusal(calls, ResumeRequest(data={"approved": "yes"}))
    assert (error.type, error.message) == (
        INVALID_APPROVAL,
        'an approval request is answered with {"approved": true} or {"approved": false}',
    )
    calls.validate(ResumeRequest(action="decline"))  # the update's validator lets it through
    calls.accept(ResumeRequest(action="decline", reason="too much"))
    [(_, resolution)] = calls.take_resolved()
    assert (resolution.action, resolution.reason) == ("decline", "too much")
    [answer] = calls.answers()  # the answers query keeps what was answered: here the reason, and no data
    assert (answer.action, answer.reason, answer.data) == ("decline", "too much", None)

    suspend(calls, "call_1", approval=True)
    calls.accept(ResumeRequest(data={"approved": True}))
    assert [r.action for _, r in calls.take_resolved()] == ["approve"]


def test_approve_and_decline_of_a_suspended_call_resume_it_with_an_approved_flag() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0")
    calls.accept(ResumeRequest(action="approve"))
    [(_, resolution)] = calls.take_resolved()
    assert (resolution.action, resolution.data) == ("resume", {"approved": True})


def test_resume_data_must_match_the_resume_schema_for_the_update_and_the_signal() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0", schema=CONFIRM_SCHEMA)
    expected = (
        "Tool input validation failed for charge-tool. Please fix the following errors and try again:\n"
        "- confirmed: 'perhaps' is not of type 'boolean'\n\n"
        'Provided arguments: {\n  "confirmed": "perhaps"\n}'
    )
    with pytest.raises(ApplicationError) as raised:
        calls.validate(ResumeRequest(data={"confirmed": "perhaps"}))
    assert (raised.value.type, raised.value.message) == (INVALID_RESUME_DATA, expected)
    assert raised.value.details[0]["error"] is True

    refused = calls.signal(ResumeRequest(data={"confirmed": "perhaps"}))
    assert refused is not None and (refused.type, refused.message) == (INVALID_RESUME_DATA, expected)
    assert [p.tool_call_id for p in calls.pending()] == ["call_0"]  # a refused answer consumes nothing
    assert calls.answers() == []

    assert calls.signal(ResumeRequest(data={"confirmed": True})) is None
    assert calls.pending() == [] and [a.action for a in calls.answers()] == ["resume"]


def test_while_calls_run_an_update_is_not_decided_and_a_signal_is_kept() -> None:
    calls, _, _ = make_calls()
    calls.batch_started(["call_0", "call_1"])
    assert calls.any_running and calls.running_count == 2
    calls.validate(ResumeRequest(tool_call_id="call_0"))  # nothing waits yet, and no error either
    request = ResumeRequest(tool_call_id="call_0", data={"confirmed": True})
    assert calls.signal(request) is None
    assert calls.answers() == []

    calls.batch_stopped()
    calls.call_ended(
        call_input("call_0"),
        ToolCallResult(status="suspended", suspension=Suspension(kind="suspension")),
        T0,
    )
    assert not calls.any_running and calls.running_count == 0
    assert calls.take_deferred() == [request]
    assert calls.take_deferred() == []
    assert calls.signal(request) is None
    assert [a.tool_call_id for a in calls.answers()] == ["call_0"]


def test_a_call_whose_tool_refuses_its_answer_waits_again_as_it_was() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0", schema=CONFIRM_SCHEMA)
    before = calls.pending()
    calls.accept(ResumeRequest(data={"confirmed": True}))
    [(waiting, _)] = calls.take_resolved()
    calls.batch_started([waiting.tool_call_id])
    calls.batch_stopped()
    calls.call_ended(call_input("call_0", round=1), ToolCallResult(status="resume-rejected"), T0)
    assert calls.pending() == before


def test_a_refused_call_waits_again_behind_the_others_and_keeps_its_reminders() -> None:
    calls, _, _ = make_calls()
    reminded = Suspension(kind="suspension", tool_id="charge-tool", remind_every_seconds=60)
    calls.call_ended(call_input("call_0"), ToolCallResult(status="suspended", suspension=reminded), T0)
    suspend(calls, "call_1", index=1)
    [alarm] = calls.ring(T0 + timedelta(seconds=60))
    assert (alarm.call.tool_call_id, alarm.reminder) == ("call_0", 1)
    calls.accept(ResumeRequest(tool_call_id="call_0"))
    calls.take_resolved()
    calls.call_ended(call_input("call_0", round=1), ToolCallResult(status="resume-rejected"), T0)
    assert [p.tool_call_id for p in calls.pending()] == ["call_1", "call_0"]
    assert calls.next_wakeup(True) == T0 + timedelta(seconds=120)  # the second reminder, not the first again


def test_a_call_resolved_again_keeps_its_place_among_the_answers() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0")
    suspend(calls, "call_1", index=1)
    calls.accept(ResumeRequest(tool_call_id="call_0"))
    calls.accept(ResumeRequest(tool_call_id="call_1"))
    calls.resolve({"call_0": Resolution(action="resume", data="its child closed")})
    taken = [(waiting.tool_call_id, resolution.data) for waiting, resolution in calls.take_resolved()]
    assert taken == [("call_0", "its child closed"), ("call_1", None)]


def test_a_call_that_ends_another_way_stops_waiting() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0")
    calls.accept(ResumeRequest())
    calls.take_resolved()
    calls.call_ended(call_input("call_0", round=1), ToolCallResult(status="result"), T0)
    assert not calls.any_waiting and calls.pending() == []


def test_deadlines_decline_approval_requests_and_expire_suspensions() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0", expires_in=60)
    suspend(calls, "call_1", approval=True, expires_in=30)
    suspend(calls, "call_2")
    assert calls.pending()[0].expires_at == T0 + timedelta(seconds=60)
    assert calls.next_deadline() == T0 + timedelta(seconds=30)

    calls.expire(T0 + timedelta(seconds=45))
    assert [p.tool_call_id for p in calls.pending()] == ["call_0", "call_2"]
    calls.expire(T0 + timedelta(seconds=60))
    resolved = [(w.tool_call_id, r.action, r.expired) for w, r in calls.take_resolved()]
    assert resolved == [("call_1", "decline", True), ("call_0", "expire", True)]
    assert calls.next_deadline() is None and calls.answers() == []  # no person answered


def test_a_handoff_takes_the_open_suspended_call_of_its_tool() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0", "ask", approval=True)
    request = HandoffRequest(tool_name="ask", by_run_id="run-2")
    with pytest.raises(ApplicationError) as raised:
        calls.handoff_target(request)
    assert (raised.value.type, raised.value.message) == (TOOL_CALL_NOT_SUSPENDED, 'no suspended call of tool "ask"')

    suspend(calls, "call_1", "ask", index=1)
    assert calls.handoff_target(request) == "call_1"
    waiting = calls.hand_off(request)
    assert (waiting.tool_call_id, waiting.args) == ("call_1", {"amount": 5})
    with pytest.raises(ApplicationError):
        calls.handoff_target(request)  # already handed off
    [(_, resolution)] = calls.take_resolved()
    assert (resolution.action, resolution.data) == ("handoff", {"runId": "run-2"})


def test_calls_resolved_without_a_person_are_taken_up_too() -> None:
    calls, _, _ = make_calls()
    suspend(calls, "call_0", "agent-helper")
    suspend(calls, "call_1", index=1)
    assert calls.waiting_ids() == ["call_0", "call_1"]
    calls.resolve({})
    assert not calls.any_resolved
    calls.resolve({"call_0": Resolution(action="resume")})
    assert [p.tool_call_id for p in calls.pending()] == ["call_1"]


@pytest.mark.parametrize("patched", [True, False], ids=["patched", "before-the-patch"])
def test_a_resumed_call_keeps_its_tools_activity_options_behind_the_patch(patched: bool) -> None:
    calls, _, patch = make_calls(patched=patched)
    options = ActivityOptions(start_to_close_timeout=timedelta(seconds=7), maximum_attempts=2)
    suspend(calls, "call_0", activity=options)
    suspend(calls, "call_1", index=1)
    calls.accept(ResumeRequest(tool_call_id="call_1"))
    calls.accept(ResumeRequest(tool_call_id="call_0"))
    taken = calls.take_resolved()

    assert calls.resumed_options(taken[0][0].tool_call_id) is None
    assert patch.asked == 0  # a tool without options never asks the patch (no marker in its history)
    assert calls.resumed_options(taken[1][0].tool_call_id) == (options if patched else None)
    assert patch.asked == 1


@pytest.mark.parametrize("patched", [True, False], ids=["patched", "before-the-patch"])
def test_the_answer_after_a_refused_one_runs_anew_with_the_tools_options(patched: bool) -> None:
    """The refused resume ran with the tool's options; the next answer runs with them again, and with its refusals
    counted (its keys differ from the refused one's). Before the ``refused-resumes-run-anew`` patch: the defaults
    and the refused answer's keys, as such runs did."""
    refused = Patch(patched)
    calls, _, _ = make_calls(refused_patch=refused)
    options = ActivityOptions(start_to_close_timeout=timedelta(seconds=7), maximum_attempts=2, local=True)
    suspend(calls, "call_0", schema=CONFIRM_SCHEMA, activity=options)
    calls.accept(ResumeRequest(data={"confirmed": True}))
    [(waiting, _)] = calls.take_resolved()
    first = calls.resumed_options(waiting.tool_call_id)
    assert first == options
    calls.batch_started([waiting.tool_call_id])
    calls.batch_stopped()
    assert calls.refusals(waiting.tool_call_id) == 0
    calls.call_ended(call_input("call_0", round=1, activity=first), ToolCallResult(status="resume-rejected"), T0)
    assert refused.asked == 1

    calls.accept(ResumeRequest(data={"confirmed": True}))
    [(again, _)] = calls.take_resolved()
    assert (again.round, calls.refusals(again.tool_call_id)) == (0, 1 if patched else 0)  # its next round is 1
    assert calls.resumed_options(again.tool_call_id) == (options if patched else None)
    refused_twice = call_input("call_0", round=1, activity=first).model_copy(update={"refusals": 1})
    calls.call_ended(refused_twice, ToolCallResult(status="resume-rejected"), T0)
    assert calls.refusals("call_0") == (2 if patched else 0)
    calls.accept(ResumeRequest(data={"confirmed": True}))
    calls.take_resolved()
    calls.call_ended(call_input("call_0", round=1), ToolCallResult(status="result"), T0)
    assert calls.refusals("call_0") == 0 and not calls.any_waiting


def test_the_refusal_patch_is_asked_only_when_a_tool_refuses_an_answer() -> None:
    refused = Patch(True)
    calls, _, _ = make_calls(refused_patch=refused)
    suspend(calls, "call_0", schema=CONFIRM_SCHEMA)
    calls.accept(ResumeRequest(data={"confirmed": True}))
    calls.take_resolved()
    again_suspended = Suspension(kind="suspension", tool_id="charge-tool", resume_schema=CONFIRM_SCHEMA)
    calls.call_ended(call_input("call_0", round=1), ToolCallResult(status="suspended", suspension=again_suspended), T0)
    assert refused.asked == 0  # histories of runs whose tools refuse nothing carry no marker
    calls.accept(ResumeRequest(data={"confirmed": True}))
    [(again, _)] = calls.take_resolved()
    calls.call_ended(call_input("call_0", round=2), ToolCallResult(status="resume-rejected"), T0)
    assert refused.asked == 1
    calls.accept(ResumeRequest(data={"confirmed": True}))
    [(again, _)] = calls.take_resolved()
    assert (again.round, calls.refusals("call_0"), calls.resumed_options("call_0")) == (1, 1, None)


def test_the_latest_answers_are_carried_across_continue_as_new() -> None:
    earlier = [Answer(tool_call_id=f"old_{n}", tool_name="charge", action="resume") for n in range(MAX_CARRIED_ANSWERS)]
    calls, _, _ = make_calls(answers=earlier)
    suspend(calls, "call_0")
    calls.accept(ResumeRequest())
    carried = calls.carried_answers()
    assert len(carried) == MAX_CARRIED_ANSWERS
    assert carried[0].tool_call_id == "old_1" and carried[-1].tool_call_id == "call_0"
    assert len(calls.answers()) == MAX_CARRIED_ANSWERS + 1
