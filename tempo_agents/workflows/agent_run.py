"""AgentRunWorkflow: the durable agent loop. Workflow id == run id.

Only small state lives here (step counter, usage, the outbox of chunks still to write, the waiting calls in
:class:`WaitingCalls`, the journal's segments in :class:`Segments`); every model call and tool call is an activity
and transcripts stay in the store (ARCHITECTURE.md, "Durable-execution rules"). A run that waits for a person is
blocked on ``wait_condition``: no activity, no slot, no polling.

The journal of a run is cut into *segments*, each ending with a ``finish`` chunk: the first ends when
the run finishes or suspends; every resume opens the next one. The activity that ends a segment writes
its end (a model step that called no tool, the last call of a batch that suspended); the finish activity
does it only when none could.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta
from typing import Any

import pydantic
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, FailureError

from tempo_agents.activity_options import FINISH_DEFAULTS, MODEL_STEP_DEFAULTS, TOOL_CALL_DEFAULTS
from tempo_agents.errors import TempoAgentsError
from tempo_agents.journal import constructors, keys
from tempo_agents.journal.outbox import JournalOutbox, JournalRecord, StepFinishNote, TranscriptRecord
from tempo_agents.models.messages import Message, ToolResultPart
from tempo_agents.models.usage import Usage
from tempo_agents.tasks import TaskItem
from tempo_agents.workflows import activity_calls, search_attributes
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW, FINISH_RUN, JOURNAL, MODEL_STEP, TOOL_CALL
from tempo_agents.workflows.child_payloads import CHILD_SUSPENDED_SIGNAL, ChildSuspension
from tempo_agents.workflows.child_tools import ChildCalls
from tempo_agents.workflows.payloads import (
    Answer,
    BudgetAnswer,
    BudgetState,
    BudgetWait,
    CallAlarm,
    CarriedState,
    FinishInput,
    HandoffAccepted,
    HandoffRequest,
    JournalInput,
    ModelStepInput,
    ModelStepResult,
    PendingCall,
    Resolution,
    ResumeAccepted,
    ResumeRequest,
    RunInput,
    RunResult,
    RunSnapshot,
    SegmentClose,
    ThreadCatchUp,
    ToolCallInput,
    ToolCallRequest,
    ToolCallResult,
)
from tempo_agents.workflows.resume_errors import AGENT_MISMATCH, NOT_SUSPENDED
from tempo_agents.workflows.search_attributes import RunStatus
from tempo_agents.workflows.segments import Segments
from tempo_agents.workflows.steering import (
    INTERRUPT,
    INTERRUPTED,
    RUN_FINISHED,
    STEER,
    STEERING_PATCH,
    InterruptRequest,
    SteerAccepted,
    SteerRequest,
    Steers,
    interrupted_call_message,
    interrupted_record,
)
from tempo_agents.workflows.task_state import TaskState
from tempo_agents.workflows.thread_payloads import (
    GO_AHEAD_SIGNAL,
    RUN_ANSWERED_SIGNAL,
    RUN_ENDED_SIGNAL,
    RUN_WAITING_SIGNAL,
    THREAD_WORKFLOW_ID_PREFIX,
    ThreadRunNote,
)
from tempo_agents.workflows.waiting_calls import WaitingCalls

SEGMENTS_CLOSED_BY_ACTIVITIES = "segments-closed-by-activities"
"""Patch id: runs started before it end every segment with the finish activity and journal a resume's
``start`` with a local activity; their histories replay on that path."""

RESUMED_CALLS_KEEP_OPTIONS = "resumed-calls-keep-options"
"""Patch id: runs started before it resumed a suspended call with the default activity options, whatever its tool
declared. Asked only when the tool declared options."""

APPROVED_ARGUMENTS = "approved-arguments"
"""Patch id: a call approved with arguments an approver changed runs again with those arguments. Asked only for
such an answer (which no run before the patch could be given), so other histories carry no marker."""

REFUSED_RESUMES_RUN_ANEW = "refused-resumes-run-anew"
"""Patch id: runs started before it ran the answer that followed a refused one (``resume-rejected``) with the default
activity options (the refused resume had taken the tool's) and under the refused answer's keys (so a local or
retried activity could find the refused outcome and answer with it). Asked when a tool refuses an answer."""

BUDGET_WAITS = "budget-waits"
"""Patch id: a run whose budget policy is ``wait`` waits for a person when a model step finds a limit reached,
then runs the step again (or ends). Asked only when that happens, so other histories carry no marker."""

RUNS_YIELD_THREADS = "runs-yield-threads"
"""Patch id: a thread's run that waits only for people yields its thread and, once answered, waits for the thread's
go-ahead before it goes on (reading what was said meanwhile). Asked only when such a run begins to wait, so other
histories carry no marker."""

CALL_ALARMS = "call-reminders-and-escalation"
"""Patch id: a waiting call with ``remind_every``/``escalate_after`` wakes the run for its reminders and its
escalation. Asked only when a waiting call has one, so other histories carry no marker."""

WAIT_FOR_CANCELLATION = workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
"""A cancelled run journals ``abort`` only once its running model step and tools have stopped."""


@workflow.defn(
    name=AGENT_RUN_WORKFLOW, sandboxed=False, failure_exception_types=[TempoAgentsError, pydantic.ValidationError]
)
class AgentRunWorkflow:
    """One agent run: model step, the step's tool calls in parallel, wait for people, repeat.

    Runs outside Temporal's sandbox by default (ARCHITECTURE.md, "Durable-execution rules" 1): the workflow is
    this package's own code, every module it imports was passed through the sandbox anyway, and the sandbox
    costs a worker about 15 % of its CPU per step. Tests replay every committed history inside the sandbox,
    and ``TempoAgentsPlugin(sandboxed_runs=True)`` (or ``TEMPO_AGENTS_SANDBOXED_RUNS=1``) runs it there live.
    """

    @workflow.init
    def __init__(self, run_input: RunInput) -> None:
        if not run_input.run_id:
            # A run started by a Temporal Schedule: its id is the workflow id the schedule gave it.
            run_input = run_input.model_copy(update={"run_id": workflow.info().workflow_id})
        carried = run_input.carried or CarriedState(step=0, usage=Usage())
        self._run_input = run_input
        self._step = carried.step
        self._usage = carried.usage
        self._segments = Segments(carried.segment)
        self._mode = carried.mode if run_input.carried is not None else run_input.options.mode
        self._tasks = TaskState(carried.tasks, carried.task_signal_state, carried.state_signals)
        self._projects_tasks = carried.projects_tasks
        self._outbox = carried.outbox
        self._status: RunStatus = "running"
        self._calls = WaitingCalls(
            carried.answers,
            clock=workflow.now,
            keeps_options=_keeps_resumed_options,
            refusals_counted=_refused_answers_run_anew,
        )
        self._handed_off = False
        self._notes: list[JournalRecord] = []
        """Refused signals, journaled at once by a local activity while the run waits."""
        self._refused_signals = 0
        self._alarms: list[CallAlarm] = []
        """Reminders and escalations to notify about, handed to the journal activity with their notes."""
        self._model_step_running: int | None = None
        self._child_calls = ChildCalls()
        self._budget_waits = carried.budget_waits
        self._budget_wait: BudgetWait | None = None
        self._budget_answer: BudgetAnswer | None = None
        self._budget_answered: str | None = None
        self._steers = Steers(carried.steers)
        self._interrupt: InterruptRequest | None = None
        self._continuing = False
        """The run continues as new: queued steers are carried to the next run."""
        self._ended_interrupted = False
        self._thread_yields = carried.yielded_thread
        """The run yielded its thread at some point: it tells the thread when it ends."""
        self._waiting_since: datetime | None = None
        """Since when the run waits with its thread yielded (``None``: it holds its thread)."""
        self._go_ahead = False
        self._catch_up: ThreadCatchUp | None = None
        """For the next model step: the run waited with its thread yielded, and others may have spoken."""

    # Queries --------------------------------------------------------------------------------

    @workflow.query(name="status")
    def status(self) -> str:
        """``running``, ``suspended``, ``completed`` or ``failed``."""
        return self._status

    @workflow.query(name="steps")
    def steps(self) -> int:
        """Model steps finished so far."""
        return self._step

    @workflow.query(name="usage")
    def usage(self) -> Usage:
        """Token usage so far."""
        return self._usage

    @workflow.query(name="tasks")
    def tasks(self) -> list[TaskItem]:
        """The run's task list, as the model was last shown it (memory-backed runs with task tools)."""
        return self._tasks.tasks

    @workflow.query(name="mode")
    def mode(self) -> str | None:
        """The agent mode the run is in (``None`` for agents without modes)."""
        return self._mode

    @workflow.query(name="answers")
    def answers(self) -> list[Answer]:
        """The answers accepted so far (the latest ``MAX_CARRIED_ANSWERS`` across continue-as-new): who, what,
        when."""
        return self._calls.answers()

    @workflow.query(name="calls_running")
    def calls_running(self) -> int:
        """How many tool calls run now; while any do, which calls wait is not settled (the journal can show a
        suspension before the workflow has heard of it)."""
        return self._calls.running_count

    @workflow.query(name="children")
    def children(self) -> dict[str, str]:
        """The child run id of each call that runs (or waits) as a child workflow, by tool call id."""
        return self._child_calls.running()

    @workflow.query(name="steers_received")
    def steers_received(self) -> int:
        """How many steers the run has received (delivered, kept or refused)."""
        return self._steers.received

    @workflow.signal(name=CHILD_SUSPENDED_SIGNAL)
    def child_suspended(self, suspension: ChildSuspension) -> None:
        """A workflow tool of this run waits for a person."""
        self._child_calls.suspended(suspension)

    @workflow.query(name="pending")
    def pending(self) -> list[PendingCall]:
        """The calls waiting for a person (suspended calls and approval requests)."""
        return self._calls.pending()

    @workflow.query(name="snapshot")
    def snapshot(self) -> RunSnapshot:
        """``status``, ``mode``, ``steps``, ``usage``, ``pending``, ``tasks`` and ``answers`` at once."""
        return RunSnapshot(
            status=self._status,
            mode=self._mode,
            steps=self._step,
            usage=self._usage,
            pending=self.pending(),
            tasks=self._tasks.tasks,
            answers=self._calls.answers(),
            budget=self.budget(),
        )

    @workflow.query(name="budget")
    def budget(self) -> BudgetState:
        """The run's budget (raised by people's answers), its memory, and whether it waits for a raise."""
        memory = self._run_input.options.memory
        return BudgetState(
            budget=self._run_input.options.budget,
            thread=memory.thread if memory is not None else None,
            resource=memory.resource if memory is not None else None,
            waiting=self._budget_wait,
        )

    @workflow.update(name="budget")
    async def answer_budget(self, answer: BudgetAnswer) -> ResumeAccepted:
        """Raise the budget of a run that waits for it (the step runs again) or end the run.

        The journal shows the wait before the workflow hears of the model step that found the limit: an answer
        that arrives while a model step runs waits for it, then is decided."""
        await workflow.wait_condition(lambda: self._model_step_running is None)
        wait = self._budget_wait
        if wait is None or wait.stop.wait_id is None or self._budget_answer is not None:
            raise _not_waiting_for_budget()
        self._budget_answer = answer
        return ResumeAccepted(tool_call_id=wait.stop.wait_id, after_key=keys.finish(self._segments.current))

    @answer_budget.validator
    def _validate_budget_answer(self, answer: BudgetAnswer) -> None:
        if answer.action == "raise" and answer.budget is None:
            raise ApplicationError("raising a budget needs the new budget", type="InvalidBudget", non_retryable=True)
        if self._model_step_running is None and (self._budget_wait is None or self._budget_answer is not None):
            raise _not_waiting_for_budget()

    # Resume: an update (validated, acknowledged) and a signal (fire-and-forget), one path -----

    @workflow.update(name="resume")
    async def resume(self, request: ResumeRequest) -> ResumeAccepted:
        """Answer a waiting call; returns once the segment it ends is closed in the journal.

        A resume that arrives while calls run (a suspension already journaled, its activity not yet
        reported) waits for them to end, then is decided like any other.
        """
        if self._calls.any_running:
            await workflow.wait_condition(lambda: not self._calls.any_running)
        call_id = self._calls.accept(request)
        segment = self._segments.current
        await workflow.wait_condition(lambda: self._segments.has_closed(segment))
        return ResumeAccepted(tool_call_id=call_id, after_key=keys.finish(segment))

    @resume.validator
    def _validate_resume(self, request: ResumeRequest) -> None:
        if request.agent_id is not None and request.agent_id != self._run_input.agent_id:
            raise ApplicationError("run belongs to another agent", type=AGENT_MISMATCH, non_retryable=True)
        self._calls.validate(request)

    @workflow.signal(name="resume")
    def resume_signal(self, request: ResumeRequest) -> None:
        """The same as the ``resume`` update, for callers that cannot wait for an answer; a refused one is
        journaled as a ``data-error`` chunk and the run keeps waiting."""
        refusal = self._calls.signal(request)
        if refusal is not None:
            self._refused_signals += 1
            chunk = constructors.resume_rejected(
                self._run_input.run_id, refusal.type or NOT_SUSPENDED, refusal.message, request.tool_call_id
            )
            self._notes.append(JournalRecord(chunk=chunk, key=f"resume-signal-refused:{self._refused_signals}"))

    # Steering and interrupting the running run ---------------------------------------------

    @workflow.update(name=STEER)
    async def steer(self, request: SteerRequest) -> SteerAccepted:
        """Deliver a user message into the run: the model sees it at the next model step. Returns once a step has
        it (``delivered``), or at once when the run waits for a person (``kept`` for the step after the answer);
        fails with ``run-finished`` when the run ends without another step (the sender starts a new run)."""
        position = self._steers.receive(request, awaited=True)
        await workflow.wait_condition(
            lambda: self._steers.settled(position) or self._status == "suspended" or self._continuing
        )
        step = self._steers.delivered_at(position)
        if step is None and self._steers.settled(position):
            raise _run_finished()
        self._steers.answered(position)
        if step is not None:
            return SteerAccepted(position=position, status="delivered", step=step)
        return SteerAccepted(position=position, status="kept")

    @steer.validator
    def _validate_steer(self, request: SteerRequest) -> None:
        if self._steers.closed:
            raise _run_finished()

    @workflow.signal(name=STEER)
    def steer_signal(self, request: SteerRequest) -> None:
        """The same as the ``tempo_agents.steer`` update, for callers that cannot wait for an answer; a steer the
        run cannot take is listed in its result's ``undelivered_steers``."""
        if self._steers.closed:
            self._steers.refuse_late(request)
        else:
            self._steers.receive(request)

    @workflow.signal(name=GO_AHEAD_SIGNAL)
    def thread_go_ahead(self) -> None:
        """The run's thread gives it its turn: an answered run that had yielded the thread goes on."""
        self._go_ahead = True

    @workflow.signal(name=INTERRUPT)
    def interrupt(self, request: InterruptRequest) -> None:
        """Stop at the next step boundary (at once when the run waits for a person), keeping what the run did."""
        if self._interrupt is None:
            self._interrupt = request

    @workflow.update(name="handoff")
    async def handoff(self, request: HandoffRequest) -> HandoffAccepted:
        """Give a suspended call to a later run of the thread (auto-resume); this run then ends."""
        waiting = self._calls.hand_off(request)
        return HandoffAccepted(
            tool_call_id=waiting.tool_call_id,
            tool_name=waiting.tool_name,
            args=waiting.args,
            suspend_payload=waiting.suspend_payload,
            input_snapshot=waiting.input_snapshot,
        )

    @handoff.validator
    def _validate_handoff(self, request: HandoffRequest) -> None:
        self._calls.handoff_target(request)

    # The loop -------------------------------------------------------------------------------

    @workflow.run
    async def run(self, run_input: RunInput) -> RunResult:
        run_input = self._run_input  # the run id filled in (a scheduled run's)
        self._segments.take_path(workflow.patched(SEGMENTS_CLOSED_BY_ACTIVITIES))
        options = run_input.options
        new_messages = run_input.messages
        if run_input.carried is None:
            fork = options.fork
            fork_of = None if fork is None else (fork.run_id, fork.step)
            self._outbox.records.append(
                constructors.start(run_input.run_id, run_input.agent_id, self._segments.current, fork_of)
            )
        try:
            while True:
                step = self._step
                result = await self._budgeted_step(step, new_messages)
                new_messages = []
                self._usage = self._usage + result.usage
                self._projects_tasks = result.projects_tasks
                if result.thread_tasks is not None:
                    self._tasks.load(result.thread_tasks)
                if result.closed_segment:
                    self._segments.close()
                for call in result.tool_calls:
                    if call.operation is not None:
                        self._tasks.run_tool(run_input.run_id, step, call, options.memory, self._outbox)
                step_note = StepFinishNote(
                    step=step, reason=result.finish_reason, usage=result.usage, is_continued=False, segment=0
                )
                await self._run_calls(
                    [self._call_input(step, call) for call in result.tool_calls if call.operation is None],
                    step_note,
                    reason_if_done="length" if step + 1 >= options.max_steps else None,
                )
                self._step = step + 1
                await self._wait_for_people(step_note)
                called_tools = bool(result.tool_calls) or result.answered_calls > 0
                if self._ended_interrupted:
                    reason = INTERRUPTED
                elif self._handed_off:
                    reason = "handed-off"
                elif not called_tools:
                    reason = result.finish_reason
                elif self._step >= options.max_steps:
                    reason = "length"
                elif self._interrupted() and self._interrupt is not None:
                    reason = INTERRUPTED
                    self._outbox.records.append(interrupted_record(run_input.run_id, self._interrupt, self._step))
                else:
                    reason = ""
                if reason:
                    self._steers.close()
                    self._set_status("completed")
                    if self._segments.is_open:
                        self._outbox.step_finish = step_note.model_copy(update={"segment": self._segments.current})
                        await self._finish_segment(reason)
                    await self._tell_thread_ended("COMPLETED")
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    return RunResult(
                        run_id=run_input.run_id,
                        finish_reason=reason,
                        usage=self._usage,
                        steps=self._step,
                        undelivered_steers=self._steers.undelivered(),
                    )
                self._outbox.step_finish = step_note.model_copy(
                    update={"is_continued": True, "segment": self._segments.current}
                )
                if workflow.info().is_continue_as_new_suggested():
                    self._continuing = True
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    workflow.continue_as_new(self._continued_input())
        except ActivityError as error:
            if isinstance(error.cause, CancelledError):  # the run was cancelled while an activity ran
                await self._abort()
                await self._tell_thread_ended("CANCELED")
                raise asyncio.CancelledError() from error
            message = _failure_message(error)
            self._steers.close()
            self._set_status("failed")
            await self._finish_segment("error", error=message, abandoned_step=self._model_step_running)
            await self._tell_thread_ended("FAILED")
            raise ApplicationError(message, type="AgentRunFailed", non_retryable=True) from None
        except asyncio.CancelledError:
            await self._abort()
            await self._tell_thread_ended("CANCELED")
            raise

    async def _budgeted_step(self, step: int, new_messages: list[Message]) -> ModelStepResult:
        """A model step; when it finds a budget limit reached and the policy waits, wait for a person and run
        it again with the raised budget (or end the run: the result then says ``budget-exceeded``)."""
        result = await self._model_step(step, new_messages)
        while result.budget_stop is not None and result.budget_stop.wait_id is not None:
            if not workflow.patched(BUDGET_WAITS):
                break
            answer = await self._wait_for_budget(result)
            if answer.action == "end":
                return result.model_copy(update={"closed_segment": False, "budget_stop": None})
            result = await self._model_step(step, new_messages)
        return result

    async def _wait_for_budget(self, result: ModelStepResult) -> BudgetAnswer:
        stop = result.budget_stop
        assert stop is not None and stop.wait_id is not None
        if result.closed_segment:
            self._segments.close()
        elif self._segments.is_open:  # a run on the path where the finish activity ends every segment
            self._outbox.step_finish = StepFinishNote(
                step=stop.step, reason="suspended", usage=Usage(), is_continued=False, segment=self._segments.current
            )
            await self._finish_segment("suspended")
        self._budget_wait = BudgetWait(stop=stop, since=workflow.now())
        self._set_status("suspended")
        await self._yield_thread()
        await workflow.wait_condition(lambda: self._budget_answer is not None)
        answer, self._budget_answer = self._budget_answer, None
        assert answer is not None
        if answer.action == "raise":
            await self._take_thread_back()
        self._budget_wait = None
        self._budget_answered = stop.wait_id
        self._budget_waits += 1
        run_id = self._run_input.run_id
        if answer.action == "raise":
            options = self._run_input.options.model_copy(update={"budget": answer.budget})
            self._run_input = self._run_input.model_copy(update={"options": options})
        if self._segments.open_next():
            self._outbox.records.append(constructors.start(run_id, self._run_input.agent_id, self._segments.current))
        data: dict[str, Any] = {"waitId": stop.wait_id, "action": answer.action, "answeredBy": answer.answered_by}
        if answer.budget is not None:
            data["budget"] = answer.budget.to_wire()
        self._outbox.records.append(
            JournalRecord(
                chunk=constructors.data_chunk(run_id, "data-budget-answered", data),
                key=f"budget-answered:{stop.wait_id}",
            )
        )
        self._set_status("running")
        if self._segments.journals_resume_start:
            records, self._outbox.records = self._outbox.records, []
            await self._journal(records)
        return answer

    async def _model_step(self, step: int, new_messages: list[Message]) -> ModelStepResult:
        run_input = self._run_input
        signals = self._tasks.refresh_signals() if self._projects_tasks else []
        close = self._segments.model_step_close(step + 1, self._usage)
        options = run_input.model_step_activity or MODEL_STEP_DEFAULTS
        if self._steers.any_queued and workflow.patched(STEERING_PATCH):
            self._steers.deliver(run_input.run_id, step, self._outbox)
        self._model_step_running = step
        result = await activity_calls.execute(
            MODEL_STEP,
            ModelStepInput(
                run_id=run_input.run_id,
                agent_id=run_input.agent_id,
                step=step,
                options=run_input.options,
                new_messages=new_messages,
                outbox=self._take_outbox(),
                mode=self._mode,
                state_signals=signals,
                close=close,
                now=workflow.now(),
                budget_waits=self._budget_waits,
                budget_answered=self._budget_answered,
                catch_up=self._catch_up,
            ),
            options=options,
            result_type=ModelStepResult,
            cancellation_type=WAIT_FOR_CANCELLATION,
            summary=f"model step {step}",
        )
        self._model_step_running = None
        self._budget_answered = None
        self._catch_up = None
        return result

    def _call_input(self, step: int, call: ToolCallRequest, **resumed: Any) -> ToolCallInput:
        return ToolCallInput(
            run_id=self._run_input.run_id,
            agent_id=self._run_input.agent_id,
            step=step,
            call=call,
            options=self._run_input.options,
            mode=self._mode,
            **resumed,
        )

    async def _run_calls(
        self, inputs: list[ToolCallInput], step_note: StepFinishNote, reason_if_done: str | None
    ) -> None:
        """Run a batch of calls in parallel. The first takes the outbox; each is told how to end the
        segment should it find itself the last of the batch to end."""
        if not inputs:
            return
        batch = self._segments.batch_close(
            [keys.tool_call_outcome(i.step, i.call.tool_call_id, i.round, i.refusals) for i in inputs],
            step_note,
            self._usage,
            reason_if_done,
            suspended_elsewhere=self._calls.any_waiting,
        )
        outbox = self._take_outbox()
        inputs = [
            i.model_copy(update={"batch": batch, "outbox": outbox if n == 0 else JournalOutbox()})
            for n, i in enumerate(inputs)
        ]
        self._calls.batch_started(i.call.tool_call_id for i in inputs)
        try:
            results = await asyncio.gather(*(self._tool_call(i) for i in inputs), return_exceptions=True)
        finally:
            self._calls.batch_stopped()
        now = workflow.now()
        for call_input, result in zip(inputs, results, strict=True):
            if isinstance(result, BaseException):
                self._call_lost(call_input, result, given_outbox=outbox if call_input is inputs[0] else None)
                continue
            self._call_ended(call_input, result, now)
        for request in self._calls.take_deferred():
            self.resume_signal(request)

    async def _tool_call(self, call_input: ToolCallInput) -> ToolCallResult:
        if self._child_calls.owns(call_input):
            return await self._child_calls.resume(call_input)
        options = call_input.call.activity or TOOL_CALL_DEFAULTS
        result = await activity_calls.execute(
            TOOL_CALL,
            call_input,
            options=options,
            result_type=ToolCallResult,
            cancellation_type=WAIT_FOR_CANCELLATION,
            summary=f"tool {call_input.call.tool_name} (step {call_input.step})",
        )
        if result.status == "delegate" and result.child is not None:
            result = await self._child_calls.start(call_input, result.child)
        return result

    def _call_ended(self, call_input: ToolCallInput, result: ToolCallResult, now: datetime) -> None:
        if result.closed_segment:
            self._segments.close()
        if result.switch_mode_to is not None and result.switch_mode_to != self._mode:
            self._switch_mode(result.switch_mode_to)
        self._calls.call_ended(call_input, result, now)

    def _call_lost(self, call_input: ToolCallInput, error: BaseException, given_outbox: JournalOutbox | None) -> None:
        """A call whose attempts ran out (its workers kept dying) ends with a tool error; the run goes on.
        Cancellation and configuration errors end the run."""
        if not isinstance(error, ActivityError) or isinstance(error.cause, CancelledError):
            raise error
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.non_retryable:
            raise error
        if given_outbox is not None:  # the outbox this call carried may not have been written
            self._outbox = given_outbox.then(self._outbox)
        call = call_input.call
        attempts = (call.activity or TOOL_CALL_DEFAULTS).maximum_attempts
        message = constructors.tool_stopped_message(call.tool_name, attempts, _failure_message(error))
        self._end_call_with_error(call_input.step, call.tool_call_id, call.tool_name, call.args, call.index, message)

    def _end_call_with_error(
        self, step: int, tool_call_id: str, tool_name: str, args: Any, index: int, message: str
    ) -> None:
        """End a call with a tool error the model reads: its chunk and its transcript entry, in the outbox."""
        run_id = self._run_input.run_id
        self._outbox.records.append(constructors.tool_error(run_id, step, tool_call_id, tool_name, args, message))
        part = ToolResultPart(tool_call_id=tool_call_id, tool_name=tool_name, result=message, is_error=True)
        self._outbox.transcript.append(
            TranscriptRecord(
                step=step,
                part=f"tool-{index:04d}",
                position=1 + index,
                message=Message(role="tool", content=[part]).to_wire(),
            )
        )

    async def _wait_for_people(self, step_note: StepFinishNote) -> None:
        while self._calls.any_waiting:
            if not self._calls.any_resolved:
                self._set_status("suspended")
                if self._segments.is_open:
                    self._outbox.step_finish = step_note.model_copy(
                        update={"reason": "suspended", "segment": self._segments.current}
                    )
                    await self._finish_segment("suspended")
                await self._yield_thread()
                while not self._calls.any_resolved:
                    if self._interrupted():
                        await self._end_interrupted_while_waiting()
                        return
                    await self._sleep_until_answered()
                    records, self._notes = self._notes, []
                    await self._journal(records)

            answered = self._calls.take_resolved()
            self._handed_off = self._handed_off or any(r.action == "handoff" for _, r in answered)
            if not self._handed_off:
                await self._take_thread_back()
            if self._segments.open_next():
                self._outbox.records.append(
                    constructors.start(self._run_input.run_id, self._run_input.agent_id, self._segments.current)
                )
            self._set_status("running")
            if self._segments.journals_resume_start:
                records, self._outbox.records = self._outbox.records, []
                await self._journal(records)
            if self._handed_off:
                reason_if_done: str | None = "handed-off"
            else:
                reason_if_done = "length" if self._step >= self._run_input.options.max_steps else None
            await self._run_calls(
                [
                    self._call_input(
                        waiting.step,
                        ToolCallRequest(
                            tool_call_id=waiting.tool_call_id,
                            tool_name=waiting.tool_name,
                            args=_approved_args(waiting, resolution),
                            index=waiting.index,
                            activity=self._calls.resumed_options(waiting.tool_call_id),
                        ),
                        round=waiting.round + 1,
                        refusals=self._calls.refusals(waiting.tool_call_id),
                        resolution=resolution,
                        suspend_payload=waiting.suspend_payload,
                        input_snapshot=waiting.input_snapshot,
                    )
                    for waiting, resolution in answered
                ],
                step_note,
                reason_if_done,
            )

    def _thread_workflow_id(self) -> str | None:
        """The run's thread's workflow, when the run yields it while it waits (README, "Threads")."""
        parent = workflow.info().parent
        options = self._run_input.options
        if parent is None or not parent.workflow_id.startswith(THREAD_WORKFLOW_ID_PREFIX):
            return None
        if options.memory is None or options.waiting_holds_thread:
            return None
        return parent.workflow_id

    async def _yield_thread(self) -> None:
        """The run waits only for people now: it tells its thread, which no longer counts it as its active run."""
        thread = self._thread_workflow_id()
        if thread is None or self._waiting_since is not None or not workflow.patched(RUNS_YIELD_THREADS):
            return
        try:
            await workflow.get_external_workflow_handle(thread).signal(
                RUN_WAITING_SIGNAL, ThreadRunNote(run_id=self._run_input.run_id)
            )
        except FailureError:  # no thread to yield: the run waits as a run of no thread does
            return
        self._waiting_since = workflow.now()
        self._thread_yields = True

    async def _take_thread_back(self) -> None:
        """Answered after it yielded its thread: ask for the thread's turn and wait for it (the thread queues the
        rest of this run like a message); the next model step first reads what was said meanwhile."""
        thread = self._thread_workflow_id()
        since = self._waiting_since
        if thread is None or since is None:
            return
        answered_at = workflow.now()
        self._waiting_since = None
        self._go_ahead = False
        try:
            await workflow.get_external_workflow_handle(thread).signal(
                RUN_ANSWERED_SIGNAL, ThreadRunNote(run_id=self._run_input.run_id)
            )
        except FailureError:  # its thread is gone (terminated): nothing to wait for
            self._go_ahead = True
        await workflow.wait_condition(lambda: self._go_ahead)
        self._catch_up = ThreadCatchUp(waited_since=since, answered_at=answered_at)

    async def _tell_thread_ended(self, status: str) -> None:
        """A run that yielded its thread tells it that it ended (the thread may hold no handle of it any more)."""
        thread = self._thread_workflow_id()
        if thread is None or not self._thread_yields:
            return
        with contextlib.suppress(FailureError):
            await workflow.get_external_workflow_handle(thread).signal(
                RUN_ENDED_SIGNAL, ThreadRunNote(run_id=self._run_input.run_id, status=status)
            )

    def _interrupted(self) -> bool:
        """Whether an interrupt ends the run now. An interrupt that reached a run before workers knew of it was
        ignored then, and is ignored on replay (its history has no patch marker here)."""
        if self._interrupt is not None and not workflow.patched(STEERING_PATCH):
            self._interrupt = None
        return self._interrupt is not None

    async def _end_interrupted_while_waiting(self) -> None:
        """Interrupted while waiting for a person: the waiting calls end with a tool error (a later run of the thread
        reads a result for every call), the end goes into a segment of its own, as a cancellation's does."""
        assert self._interrupt is not None
        run_id = self._run_input.run_id
        if self._segments.open_next():
            self._outbox.records.append(constructors.start(run_id, self._run_input.agent_id, self._segments.current))
        for call in self._calls.abandon():
            message = interrupted_call_message(call.tool_name)
            self._end_call_with_error(call.step, call.tool_call_id, call.tool_name, call.args, call.index, message)
        self._outbox.records.append(interrupted_record(run_id, self._interrupt, self._step))
        self._ended_interrupted = True
        self._steers.close()
        self._set_status("completed")
        await self._finish_segment(INTERRUPTED)

    async def _sleep_until_answered(self) -> None:
        calls = self._calls
        while not calls.any_resolved and not self._notes and self._interrupt is None:
            alarms = calls.has_alarms() and workflow.patched(CALL_ALARMS)
            deadline = calls.next_wakeup(alarms)
            timeout = None if deadline is None else max(timedelta(0), deadline - workflow.now())
            try:
                await workflow.wait_condition(
                    lambda: bool(
                        calls.any_resolved
                        or self._notes
                        or self._interrupt is not None
                        or self._child_calls.closed_alone(calls.waiting_ids())
                    ),
                    timeout=timeout,
                )
            except TimeoutError:
                calls.expire(workflow.now())
                if alarms:
                    self._ring(calls.ring(workflow.now()))
            calls.resolve(self._child_calls.closed_alone(calls.waiting_ids()))

    def _ring(self, alarms: list[CallAlarm]) -> None:
        """Reminders and escalations came due: the journal says so (the notes), the journal activity notifies,
        and an escalation shows in the memo the inbox reads."""
        run_id = self._run_input.run_id
        for alarm in alarms:
            call = alarm.call
            base = {"toolCallId": call.tool_call_id, "toolName": call.tool_name}
            if alarm.kind == "escalated":
                chunk = constructors.data_chunk(run_id, "data-call-escalated", {**base, "approvers": call.approvers})
                key = f"call-escalated:{call.tool_call_id}:{call.round}"
            else:
                chunk = constructors.data_chunk(run_id, "data-call-reminder", {**base, "reminder": alarm.reminder})
                key = f"call-reminder:{call.tool_call_id}:{call.round}:{alarm.reminder}"
            self._notes.append(JournalRecord(chunk=chunk, key=key))
            self._alarms.append(alarm)
        if any(alarm.kind == "escalated" for alarm in alarms):
            workflow.upsert_memo({"pending": [call.to_wire() for call in self.pending()]})

    def _switch_mode(self, mode: str) -> None:
        self._outbox.records.append(constructors.mode_changed(self._run_input.run_id, self._step, mode, self._mode))
        self._mode = mode

    def _take_outbox(self) -> JournalOutbox:
        outbox, self._outbox = self._outbox, JournalOutbox()
        return outbox

    def _continued_input(self) -> RunInput:
        run_input = self._run_input
        return run_input.model_copy(
            update={
                "messages": [],
                "carried": CarriedState(
                    step=self._step,
                    usage=self._usage,
                    segment=self._segments.current,
                    mode=self._mode,
                    outbox=self._outbox,
                    tasks=self._tasks.tasks,
                    task_signal_state=self._tasks.signal_state,
                    state_signals=self._tasks.signals,
                    projects_tasks=self._projects_tasks,
                    answers=self._calls.carried_answers(),
                    budget_waits=self._budget_waits,
                    steers=self._steers.carried() if self._steers.received else None,
                    yielded_thread=self._thread_yields,
                ),
            }
        )

    async def _abort(self) -> None:
        """Cancelled from outside: running tools were told (``ctx.cancelled``); the journal says so. A run
        cancelled while it waits for people has closed its segment already: the end goes into a segment of its
        own, so readers that followed the run to the suspension see ``abort`` and the ``finish`` after it."""
        if self._segments.open_next():
            self._outbox.records.append(
                constructors.start(self._run_input.run_id, self._run_input.agent_id, self._segments.current)
            )
        self._outbox.records.append(constructors.abort(self._run_input.run_id, self._segments.current))
        self._steers.close()
        self._set_status("failed")
        await self._finish_segment("aborted")

    async def _journal(self, records: list[JournalRecord]) -> None:
        """Write chunks a waiting run must show at once (no activity of the run is about to run)."""
        alarms, self._alarms = self._alarms, []
        if records:
            await workflow.execute_local_activity(
                JOURNAL,
                JournalInput(
                    run_id=self._run_input.run_id, records=records, agent_id=self._run_input.agent_id, alarms=alarms
                ),
                start_to_close_timeout=FINISH_DEFAULTS.start_to_close_timeout,
                retry_policy=FINISH_DEFAULTS.retry_policy(),
            )

    async def _finish_segment(
        self, reason: str, *, error: str | None = None, abandoned_step: int | None = None
    ) -> None:
        """End the segment with the finish activity (when no other activity could)."""
        run_input = self._run_input
        outbox = self._take_outbox()
        outbox.records.extend(self._notes)
        self._notes = []
        await workflow.execute_activity(
            FINISH_RUN,
            FinishInput(
                run_id=run_input.run_id,
                agent_id=run_input.agent_id,
                options=run_input.options,
                close=SegmentClose(
                    segment=self._segments.current,
                    steps=self._step,
                    usage=self._usage,
                    reason=reason,
                    error=error,
                    abandoned_step=abandoned_step,
                ),
                outbox=outbox,
            ),
            start_to_close_timeout=FINISH_DEFAULTS.start_to_close_timeout,
            heartbeat_timeout=FINISH_DEFAULTS.heartbeat_timeout,
            retry_policy=FINISH_DEFAULTS.retry_policy(),
            summary=f"finish ({reason})",
        )
        self._segments.close()

    def _set_status(self, status: RunStatus) -> None:
        """The ``TempoAgentStatus`` search attribute; a suspended run's memo lists what it waits on (read
        only while the status says ``suspended``, so later changes of status leave it as it is)."""
        if status != self._status:
            self._status = status
            workflow.upsert_search_attributes([search_attributes.STATUS.value_set(status)])
            if status == "suspended" or self._segments.memo_on_every_status:
                workflow.upsert_memo({"pending": [call.to_wire() for call in self.pending()]})


def _approved_args(waiting: PendingCall, resolution: Resolution) -> Any:
    """The arguments an answered call runs with: as the model made them, or as the approver changed them."""
    if resolution.args is not None and workflow.patched(APPROVED_ARGUMENTS):
        return resolution.args
    return waiting.args


def _not_waiting_for_budget() -> ApplicationError:
    return ApplicationError("run is not waiting for its budget", type=NOT_SUSPENDED, non_retryable=True)


def _run_finished() -> ApplicationError:
    return ApplicationError(
        "The run finishes without another model step: start a new run with this message.",
        type=RUN_FINISHED,
        non_retryable=True,
    )


def _keeps_resumed_options() -> bool:
    return workflow.patched(RESUMED_CALLS_KEEP_OPTIONS)


def _refused_answers_run_anew() -> bool:
    return workflow.patched(REFUSED_RESUMES_RUN_ANEW)


def _failure_message(error: ActivityError) -> str:
    cause: BaseException | None = error.cause
    while isinstance(cause, ActivityError) and cause.cause is not None:
        cause = cause.cause
    if isinstance(cause, ApplicationError):
        return cause.message
    return str(cause or error)
