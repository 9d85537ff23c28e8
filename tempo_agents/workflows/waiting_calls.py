"""The calls of a run that wait for a person, from suspension to the run that takes them up again.

A call's life: its tool call ends ``suspended`` (a suspension or an approval request) and it *waits*; an answer
*resolves* it (the ``resume`` update or signal, a ``handoff``, its deadline, its child closing on its own); the run
takes every resolved call up in one batch (*answered*) and runs it again, where it may suspend once more, or be
refused by its tool (``resume-rejected``) and wait again as it was.

Which call an answer is for and whether its data fits are decided here, for the update's validator and the
signal handler alike. While tool calls run, which calls wait is not settled (a call's suspension may be
journaled before its activity reports it): an update waits for the batch to end, a signal is kept until then.

Workflow state: pure and deterministic. The clock and the patch check are handed in by the workflow.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime

from temporalio.exceptions import ApplicationError

from tempo_agents.activity_options import ActivityOptions
from tempo_agents.approvals.who_may_answer import may_answer, not_an_approver_text
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

_RESUME_SCHEMAS: dict[str, Schema] = {}
"""Resume and input schemas parsed once per worker (pure: the same string always gives the same schema)."""


def _schema(text: str) -> Schema:
    schema = _RESUME_SCHEMAS.get(text)
    if schema is None:
        schema = _RESUME_SCHEMAS[text] = Schema(json.loads(text))
    return schema


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
        self._waiting: dict[str, PendingCall] = {}
        """Every call that waits, answered or not, in the order they suspended."""
        self._resolutions: dict[str, Resolution] = {}
        """The answers not yet taken up, in the order they came."""
        self._answered: dict[str, PendingCall] = {}
        """The calls of the batch taken up last, as they waited (a refused answer puts one back)."""
        self._options: dict[str, ActivityOptions] = {}
        """The activity options of waiting calls whose tools declared some."""
        self._refusals: dict[str, int] = {}
        """How many answers of its current round the tool of a waiting call refused."""
        self._running: set[str] = set()
        """The tool calls that run now."""
        self._deferred: list[ResumeRequest] = []
        """``resume`` signals received while calls ran, decided once they have ended."""
        self._answers = list(answers)
        self._reminders: dict[str, int] = {}
        """How many reminders each waiting call has had."""

    # What the queries show ------------------------------------------------------------------

    def pending(self) -> list[PendingCall]:
        """The calls still waiting for an answer (the ``pending`` query)."""
        return [call for call_id, call in self._waiting.items() if call_id not in self._resolutions]

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
        return bool(self._waiting)

    @property
    def any_resolved(self) -> bool:
        """Whether an answer waits to be taken up."""
        return bool(self._resolutions)

    def waiting_ids(self) -> list[str]:
        """The ids of every waiting call, answered or not."""
        return list(self._waiting)

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
        if result.status == "suspended" and result.suspension is not None:
            if call.activity is not None:
                self._options[call.tool_call_id] = call.activity
            self._waiting[call.tool_call_id] = PendingCall.of(call_input, result.suspension, now, call_input.round)
            self._reminders[call.tool_call_id] = 0
            self._refusals.pop(call.tool_call_id, None)
        elif result.status == "resume-rejected":
            self._waiting[call.tool_call_id] = self._answered[call.tool_call_id]
            if self._refusals_counted():
                self._refusals[call.tool_call_id] = call_input.refusals + 1
                if call.activity is not None:
                    self._options[call.tool_call_id] = call.activity
        else:
            self._refusals.pop(call.tool_call_id, None)

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
        if self._waiting[call_id].requires_approval or request.action == "resume":
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
        waiting = self._waiting[call_id]
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
        self._resolutions[call_id] = resolution
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
        self._resolutions[call_id] = Resolution(action="handoff", data={"runId": request.by_run_id})
        return self._waiting[call_id]

    def handoff_target(self, request: HandoffRequest) -> str:
        """The open suspended (not approval) call of the tool; raises when there is none."""
        for call_id, waiting in self._waiting.items():
            open_call = call_id not in self._resolutions and not waiting.requires_approval
            if open_call and waiting.tool_name == request.tool_name:
                return call_id
        raise ApplicationError(
            f'no suspended call of tool "{request.tool_name}"', type=TOOL_CALL_NOT_SUSPENDED, non_retryable=True
        )

    def set_approvers(self, tool_call_id: str, approvers: list[str]) -> None:
        """Assign a waiting call to other principals or groups (an escalation); empty: anyone may answer."""
        waiting = self._waiting.get(tool_call_id)
        if waiting is not None:
            self._waiting[tool_call_id] = waiting.model_copy(update={"approvers": list(approvers)})

    def resolve(self, resolutions: dict[str, Resolution]) -> None:
        """Resolve calls without a person's answer (their child closed on its own)."""
        self._resolutions.update(resolutions)

    def next_deadline(self) -> datetime | None:
        """When the first waiting call with a deadline expires."""
        deadlines = [call.expires_at for call in self._waiting.values() if call.expires_at is not None]
        return min(deadlines) if deadlines else None

    def expire(self, now: datetime) -> None:
        """Resolve every call whose deadline has passed: an approval request is declined, a suspension expires."""
        for call_id, call in self._waiting.items():
            if call.expires_at is not None and call.expires_at <= now:
                self._resolutions[call_id] = Resolution(
                    action="decline" if call.requires_approval else "expire", expired=True
                )

    # Reminders and escalation ----------------------------------------------------------------

    def has_alarms(self) -> bool:
        """Whether a call that waits unanswered has a reminder or an escalation to come."""
        return any(self._alarm_at(call_id, call) is not None for call_id, call in self._open())

    def next_wakeup(self, with_alarms: bool) -> datetime | None:
        """When the workflow must wake: the first deadline, or (``with_alarms``) the first reminder or escalation."""
        times = [call.expires_at for call in self._waiting.values() if call.expires_at is not None]
        if with_alarms:
            times += [at for call_id, call in self._open() if (at := self._alarm_at(call_id, call)) is not None]
        return min(times) if times else None

    def ring(self, now: datetime) -> list[CallAlarm]:
        """The reminders and escalations due at ``now``: an escalated call is re-addressed to its ``escalate_to``
        (its ``approvers`` from now on); reminders missed while the worker was away come as one, the latest."""
        alarms: list[CallAlarm] = []
        for call_id, call in self._open():
            escalation = call.escalation_at()
            if escalation is not None and escalation <= now:
                call = call.model_copy(update={"approvers": list(call.escalate_to or []), "escalated": True})
                self._waiting[call_id] = call
                alarms.append(CallAlarm(kind="escalated", call=call))
            sent = self._reminders.get(call_id, 0)
            due = call.reminder_at(sent)
            if due is not None and due <= now:
                while (later := call.reminder_at(sent + 1)) is not None and later <= now:
                    sent += 1
                self._reminders[call_id] = sent + 1
                alarms.append(CallAlarm(kind="reminder", call=call, reminder=sent + 1))
        return alarms

    def _open(self) -> list[tuple[str, PendingCall]]:
        return [(call_id, call) for call_id, call in self._waiting.items() if call_id not in self._resolutions]

    def _alarm_at(self, call_id: str, call: PendingCall) -> datetime | None:
        times = [t for t in (call.escalation_at(), call.reminder_at(self._reminders.get(call_id, 0))) if t is not None]
        return min(times) if times else None

    # Taking the answered calls up -------------------------------------------------------------

    def take_resolved(self) -> list[tuple[PendingCall, Resolution]]:
        """The resolved calls, in the order their answers came, with their answers: they stop waiting."""
        batch, self._resolutions = self._resolutions, {}
        self._answered = {call_id: self._waiting.pop(call_id) for call_id in batch}
        return [(waiting, batch[call_id]) for call_id, waiting in self._answered.items()]

    def abandon(self) -> list[PendingCall]:
        """The run stops waiting (it was interrupted): every waiting call, answered or not, is dropped."""
        abandoned = list(self._waiting.values())
        self._waiting = {}
        self._resolutions = {}
        return abandoned

    def resumed_options(self, call_id: str) -> ActivityOptions | None:
        """The activity options a taken-up call runs with (``None``: the defaults)."""
        options = self._options.pop(call_id, None)
        if options is not None and self._keeps_options():
            return options
        return None

    def refusals(self, call_id: str) -> int:
        """How many answers of the call's current round its tool refused (0 before the refusals patch)."""
        return self._refusals.get(call_id, 0)

    # Targeting and validation -----------------------------------------------------------------

    def _target(self, request: ResumeRequest) -> str:
        open_calls = [call_id for call_id in self._waiting if call_id not in self._resolutions]
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
        waiting = self._waiting[call_id]
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
        waiting = self._waiting[call_id]
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
        waiting = self._waiting[call_id]
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
