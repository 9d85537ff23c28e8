"""The calls of a run that wait for a person, from suspension to the run that takes them up again.

A call's life: its tool call ends ``suspended`` (a suspension or an approval request) and it *waits*; an answer
*resolves* it (the ``resume`` update or signal, a ``handoff``, its deadline, its child closing on its own); the run
takes every resolved call up in one batch (*answered*) and runs it again, where it may suspend once more, or be
refused by its tool (``resume-rejected``) and wait again as it was.

Which call an answer is for and whether its data fits are decided here, for the update's validator and the
signal handler alike. While tool calls run, which calls wait is not settled (a call's suspension may be
journaled before its activity reports it): an update waits for the batch to end, a signal is kept until then.

Each call has one record, :class:`WaitingCall`: the call as it waits, its answer, its tool's activity options, its
refused answers and its reminders. Workflow state: pure and deterministic. The clock and the patch check are handed
in by the workflow.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from temporalio.exceptions import ApplicationError

from tempo_agents.activity_options import ActivityOptions
from tempo_agents.approvals import may_answer, not_an_approver_text
from tempo_agents.tools.validation import Schema, validate_input, validate_resume_data
from tempo_agents.workflows.payloads import (
    MAX_CARRIED_ANSWERS,
    Answer,
    CallAlarm,
    HandoffRequest,
    PendingCall,
    Resolution,
    ResumeRequest,
    ToolCallInput,
    ToolCallResult,
)
from tempo_agents.workflows.resume_errors import (
    AMBIGUOUS_TOOL_CALL,
    INVALID_APPROVAL,
    INVALID_ARGS,
    INVALID_RESUME_DATA,
    NOT_AN_APPROVER,
    NOT_SUSPENDED,
    TOOL_CALL_NOT_SUSPENDED,
)

__all__ = ["WaitingCall", "WaitingCalls"]

_RESUME_SCHEMAS: dict[str, Schema] = {}
"""Resume and input schemas parsed once per worker (pure: the same string always gives the same schema)."""


def _schema(text: str) -> Schema:
    schema = _RESUME_SCHEMAS.get(text)
    if schema is None:
        schema = _RESUME_SCHEMAS[text] = Schema(json.loads(text))
    return schema


@dataclass
class WaitingCall:
    """One call that waits for a person, or was taken up again and may come back to wait (its tool refused the
    answer)."""

    pending: PendingCall
    """The call as it waits, as the ``pending`` query shows it (an escalation re-addresses it)."""
    resolution: Resolution | None = None
    """Its answer, not yet taken up (``None``: unanswered, or taken up)."""
    answer_order: int = 0
    """Where its answer came among the answers: resolved calls are taken up in that order."""
    options: ActivityOptions | None = None
    """The activity options its tool declared (``None``: the defaults, or handed to the call taken up)."""
    refusals: int = 0
    """How many answers of its current round its tool refused."""
    reminders: int = 0
    """How many reminders it has had."""
    taken_up: bool = False
    """Its answer was taken up: it runs again, and waits no more unless its tool refuses the answer."""

    @property
    def is_open(self) -> bool:
        """Whether it waits for an answer (none came yet)."""
        return not self.taken_up and self.resolution is None


class WaitingCalls:
    """The waiting calls of one run, their answers, and the answers accepted so far.

    ``clock`` is the workflow's clock; ``keeps_options`` says whether a resumed call runs with its tool's activity
    options (runs started before that patch: the defaults); it is asked only when the tool declared options.
    ``refusals_counted`` says whether a call whose tool refused its answer runs its next answer anew: with those
    options again, under keys of its own (``refusals``); runs started before that patch did neither. It is asked
    when a tool refuses an answer.
    """

    def __init__(
        self,
        answers: Iterable[Answer],
        *,
        clock: Callable[[], datetime],
        keeps_options: Callable[[], bool],
        refusals_counted: Callable[[], bool],
    ) -> None:
        self._clock = clock
        self._keeps_options = keeps_options
        self._refusals_counted = refusals_counted
        self._calls: dict[str, WaitingCall] = {}
        """Every call that waits, answered or not, in the order they began to wait, and the calls of the batch taken
        up last (a refused answer puts one back, last)."""
        self._answers_given = 0
        """How many answers resolved a call so far: the next one's ``answer_order``."""
        self._running: set[str] = set()
        """The tool calls that run now."""
        self._deferred: list[ResumeRequest] = []
        """``resume`` signals received while calls ran, decided once they have ended."""
        self._answers = list(answers)

    # What the queries show ------------------------------------------------------------------

    def pending(self) -> list[PendingCall]:
        """The calls still waiting for an answer (the ``pending`` query)."""
        return [call.pending for call in self._open()]

    def answers(self) -> list[Answer]:
        """The answers accepted so far (the ``answers`` query)."""
        return list(self._answers)

    def carried_answers(self) -> list[Answer]:
        """The latest answers, carried across continue-as-new."""
        return self._answers[-MAX_CARRIED_ANSWERS:]

    @property
    def running_count(self) -> int:
        """How many tool calls run now."""
        return len(self._running)

    @property
    def any_running(self) -> bool:
        """Whether tool calls run now (which calls wait is then not settled)."""
        return bool(self._running)

    @property
    def any_waiting(self) -> bool:
        """Whether any call waits, answered or not."""
        return any(not call.taken_up for call in self._calls.values())

    @property
    def any_resolved(self) -> bool:
        """Whether an answer waits to be taken up."""
        return any(call.resolution is not None for call in self._calls.values())

    def waiting_ids(self) -> list[str]:
        """The ids of every waiting call, answered or not."""
        return [call_id for call_id, call in self._calls.items() if not call.taken_up]

    # Tool calls running and ending ------------------------------------------------------------

    def batch_started(self, call_ids: Iterable[str]) -> None:
        """A batch of tool calls runs."""
        self._running = set(call_ids)

    def batch_stopped(self) -> None:
        """The batch's calls have all ended (or the run is being cancelled)."""
        self._running = set()

    def call_ended(self, call_input: ToolCallInput, result: ToolCallResult, now: datetime) -> None:
        """A call of the batch ended: a suspended one waits; one whose tool refused its answer waits again."""
        call = call_input.call
        taken_up = self._calls.pop(call.tool_call_id, None)
        if result.status == "suspended" and result.suspension is not None:
            pending = PendingCall.of(call_input, result.suspension, now, call_input.round)
            self._calls[call.tool_call_id] = WaitingCall(pending=pending, options=call.activity)
        elif result.status == "resume-rejected":
            assert taken_up is not None  # only a call taken up again had an answer to refuse
            taken_up.taken_up = False
            if self._refusals_counted():
                taken_up.refusals = call_input.refusals + 1
                if call.activity is not None:
                    taken_up.options = call.activity
            self._calls[call.tool_call_id] = taken_up

    # Answers ----------------------------------------------------------------------------------

    def validate(self, request: ResumeRequest) -> None:
        """The ``resume`` update's validator: raises the error the update would fail with. While calls run
        nothing is decided yet (the update waits for them)."""
        if not self._running:
            call_id = self._target(request)
            self._check_data(call_id, request)
            self._check_answer_as_data(call_id, request)
            self._check_args(call_id, request)

    def _check_answer_as_data(self, call_id: str, request: ResumeRequest) -> None:
        """An approval or decline of a call that waits for data resumes it with ``{"approved": …}``, which must
        match its resume schema too. Checked by the update's validator only (a refused update leaves no
        history), so that answers accepted before this check replay as they were."""
        if self._calls[call_id].pending.requires_approval or request.action == "resume":
            return
        answer = request.model_copy(update={"action": "resume", "data": {"approved": request.action == "approve"}})
        self._check_data(call_id, answer)

    def accept(self, request: ResumeRequest) -> str:
        """Resolve the call ``request`` answers and note the answer; returns the call's id.

        Raises ``ApplicationError`` (typed with a resume error code) when it answers no waiting call, names
        none of several, or its data does not fit.
        """
        call_id = self._target(request)
        self._check_data(call_id, request)
        self._check_args(call_id, request)
        waiting = self._calls[call_id].pending
        if waiting.requires_approval:
            approved = request.action == "approve" or (
                request.action == "resume" and isinstance(request.data, dict) and request.data.get("approved") is True
            )
            resolution = Resolution(action="approve" if approved else "decline", reason=request.reason)
        elif request.action == "resume":
            resolution = Resolution(action="resume", data=request.data)
        else:
            resolution = Resolution(action="resume", data={"approved": request.action == "approve"})
        if request.answered_by is not None:
            resolution = resolution.model_copy(update={"answered_by": request.answered_by})
        if request.answered_by_groups:
            resolution = resolution.model_copy(update={"answered_by_groups": list(request.answered_by_groups)})
        edited = request.args is not None and resolution.action == "approve" and request.args != waiting.args
        if edited:
            resolution = resolution.model_copy(update={"args": request.args, "args_before": waiting.args})
        self._resolve(call_id, resolution)
        self._answers.append(
            Answer(
                tool_call_id=call_id,
                tool_name=waiting.tool_name,
                action=resolution.action,
                answered_by=request.answered_by,
                answered_at=self._clock(),
                data=resolution.data if resolution.action == "resume" else None,
                reason=resolution.reason,
                args=resolution.args,
            )
        )
        return call_id

    def signal(self, request: ResumeRequest) -> ApplicationError | None:
        """A ``resume`` signal: accepted, kept until the running calls end, or refused (the error returned)."""
        if self._running:
            self._deferred.append(request)
            return None
        try:
            self.accept(request)
        except ApplicationError as error:
            return error
        return None

    def take_deferred(self) -> list[ResumeRequest]:
        """The signals kept while the batch ran, to be decided now that it has ended."""
        deferred, self._deferred = self._deferred, []
        return deferred

    def hand_off(self, request: HandoffRequest) -> PendingCall:
        """Give the open call of ``request.tool_name`` to a later run of the thread (the ``handoff`` update)."""
        call_id = self.handoff_target(request)
        self._resolve(call_id, Resolution(action="handoff", data={"runId": request.by_run_id}))
        return self._calls[call_id].pending

    def handoff_target(self, request: HandoffRequest) -> str:
        """The open suspended (not approval) call of the tool; raises when there is none."""
        for call_id, call in self._calls.items():
            if call.is_open and not call.pending.requires_approval and call.pending.tool_name == request.tool_name:
                return call_id
        raise ApplicationError(
            f'no suspended call of tool "{request.tool_name}"', type=TOOL_CALL_NOT_SUSPENDED, non_retryable=True
        )

    def set_approvers(self, tool_call_id: str, approvers: list[str]) -> None:
        """Assign a waiting call to other principals or groups (an escalation); empty: anyone may answer."""
        call = self._calls.get(tool_call_id)
        if call is not None and not call.taken_up:
            call.pending = call.pending.model_copy(update={"approvers": list(approvers)})

    def resolve(self, resolutions: dict[str, Resolution]) -> None:
        """Resolve calls without a person's answer (their child closed on its own)."""
        for call_id, resolution in resolutions.items():
            self._resolve(call_id, resolution)

    def next_deadline(self) -> datetime | None:
        """When the first waiting call with a deadline expires."""
        deadlines = [at for call in self._waiting() if (at := call.pending.expires_at) is not None]
        return min(deadlines) if deadlines else None

    def expire(self, now: datetime) -> None:
        """Resolve every call whose deadline has passed: an approval request is declined, a suspension expires."""
        for call_id, call in self._calls.items():
            expires_at = call.pending.expires_at
            if not call.taken_up and expires_at is not None and expires_at <= now:
                self._resolve(
                    call_id, Resolution(action="decline" if call.pending.requires_approval else "expire", expired=True)
                )

    # Reminders and escalation ----------------------------------------------------------------

    def has_alarms(self) -> bool:
        """Whether a call that waits unanswered has a reminder or an escalation to come."""
        return any(_alarm_at(call) is not None for call in self._open())

    def next_wakeup(self, with_alarms: bool) -> datetime | None:
        """When the workflow must wake: the first deadline, or (``with_alarms``) the first reminder or escalation."""
        times = [at for call in self._waiting() if (at := call.pending.expires_at) is not None]
        if with_alarms:
            times += [at for call in self._open() if (at := _alarm_at(call)) is not None]
        return min(times) if times else None

    def ring(self, now: datetime) -> list[CallAlarm]:
        """The reminders and escalations due at ``now``: an escalated call is re-addressed to its ``escalate_to``
        (its ``approvers`` from now on); reminders missed while the worker was away come as one, the latest."""
        alarms: list[CallAlarm] = []
        for call in self._open():
            escalation = call.pending.escalation_at()
            if escalation is not None and escalation <= now:
                update = {"approvers": list(call.pending.escalate_to or []), "escalated": True}
                call.pending = call.pending.model_copy(update=update)
                alarms.append(CallAlarm(kind="escalated", call=call.pending))
            sent = call.reminders
            due = call.pending.reminder_at(sent)
            if due is not None and due <= now:
                while (later := call.pending.reminder_at(sent + 1)) is not None and later <= now:
                    sent += 1
                call.reminders = sent + 1
                alarms.append(CallAlarm(kind="reminder", call=call.pending, reminder=sent + 1))
        return alarms

    def _waiting(self) -> list[WaitingCall]:
        """Every call that waits, answered or not."""
        return [call for call in self._calls.values() if not call.taken_up]

    def _open(self) -> list[WaitingCall]:
        """The calls that wait for an answer."""
        return [call for call in self._calls.values() if call.is_open]

    def _resolve(self, call_id: str, resolution: Resolution) -> None:
        """A call's answer; a call answered again (its deadline, its child) keeps its place among the answers."""
        call = self._calls[call_id]
        if call.resolution is None:
            self._answers_given += 1
            call.answer_order = self._answers_given
        call.resolution = resolution

    # Taking the answered calls up -------------------------------------------------------------

    def take_resolved(self) -> list[tuple[PendingCall, Resolution]]:
        """The resolved calls, in the order their answers came, with their answers: they stop waiting."""
        self._calls = {call_id: call for call_id, call in self._calls.items() if not call.taken_up}
        resolved = sorted(
            (call for call in self._calls.values() if call.resolution is not None), key=lambda c: c.answer_order
        )
        batch: list[tuple[PendingCall, Resolution]] = []
        for call in resolved:
            assert call.resolution is not None
            batch.append((call.pending, call.resolution))
            call.resolution = None
            call.taken_up = True
        return batch

    def abandon(self) -> list[PendingCall]:
        """The run stops waiting (it was interrupted): every waiting call, answered or not, is dropped."""
        abandoned = self._waiting()
        self._calls = {call_id: call for call_id, call in self._calls.items() if call.taken_up}
        return [call.pending for call in abandoned]

    def resumed_options(self, call_id: str) -> ActivityOptions | None:
        """The activity options a taken-up call runs with (``None``: the defaults)."""
        call = self._calls.get(call_id)
        options = None if call is None else call.options
        if call is not None:
            call.options = None
        if options is not None and self._keeps_options():
            return options
        return None

    def refusals(self, call_id: str) -> int:
        """How many answers of the call's current round its tool refused (0 before the refusals patch)."""
        call = self._calls.get(call_id)
        return 0 if call is None else call.refusals

    # Targeting and validation -----------------------------------------------------------------

    def _target(self, request: ResumeRequest) -> str:
        open_calls = [call_id for call_id, call in self._calls.items() if call.is_open]
        if not open_calls:
            raise ApplicationError("run is not suspended", type=NOT_SUSPENDED, non_retryable=True)
        if request.tool_call_id is None:
            if len(open_calls) > 1:
                raise ApplicationError("several calls are suspended", type=AMBIGUOUS_TOOL_CALL, non_retryable=True)
            call_id = open_calls[0]
        elif request.tool_call_id in open_calls:
            call_id = request.tool_call_id
        else:
            raise ApplicationError(
                f'tool call "{request.tool_call_id}" is not suspended', type=TOOL_CALL_NOT_SUSPENDED, non_retryable=True
            )
        waiting = self._calls[call_id].pending
        if request.round is not None and request.round != waiting.round:
            raise ApplicationError(
                f'tool call "{call_id}" is not suspended', type=TOOL_CALL_NOT_SUSPENDED, non_retryable=True
            )
        if not may_answer(waiting.approvers, request.answered_by, request.answered_by_groups):
            raise ApplicationError(
                not_an_approver_text(call_id, waiting.approvers), type=NOT_AN_APPROVER, non_retryable=True
            )
        if waiting.requires_approval and request.action == "resume":
            data = request.data
            if not isinstance(data, dict) or not isinstance(data.get("approved"), bool):
                raise ApplicationError(
                    'an approval request is answered with {"approved": true} or {"approved": false}',
                    type=INVALID_APPROVAL,
                    non_retryable=True,
                )
        return call_id

    def _check_data(self, call_id: str, request: ResumeRequest) -> None:
        """Resume data must match the call's resume schema: the workflow decides, whatever the client."""
        waiting = self._calls[call_id].pending
        if waiting.requires_approval or request.action != "resume" or not waiting.resume_schema:
            return
        schema = _schema(waiting.resume_schema)
        _, failure = validate_resume_data(waiting.tool_id or waiting.tool_name, schema, request.data)
        if failure is not None:
            raise ApplicationError(failure.message, failure.to_result(), type=INVALID_RESUME_DATA, non_retryable=True)

    def _check_args(self, call_id: str, request: ResumeRequest) -> None:
        """Arguments changed by an approver: only with an approval, and they must match the tool's input schema."""
        if request.args is None:
            return
        waiting = self._calls[call_id].pending
        approves = request.action == "approve" or (
            request.action == "resume" and isinstance(request.data, dict) and request.data.get("approved") is True
        )
        if not waiting.requires_approval or not approves:
            raise ApplicationError(
                f'tool call "{call_id}": arguments can be changed only when approving a call that waits for approval',
                type=INVALID_ARGS,
                non_retryable=True,
            )
        if not waiting.args_schema:  # a call that waits for its child's approval: the child's arguments are not these
            raise ApplicationError(
                f'tool call "{call_id}": its arguments cannot be changed', type=INVALID_ARGS, non_retryable=True
            )
        _, failure = validate_input(waiting.tool_id or waiting.tool_name, _schema(waiting.args_schema), request.args)
        if failure is not None:
            raise ApplicationError(failure.message, failure.to_result(), type=INVALID_ARGS, non_retryable=True)


def _alarm_at(call: WaitingCall) -> datetime | None:
    """When the call's next reminder or its escalation is due (``None``: neither is to come)."""
    times = [t for t in (call.pending.escalation_at(), call.pending.reminder_at(call.reminders)) if t is not None]
    return min(times) if times else None
