"""AgentRunWorkflow: the durable agent loop. Workflow id == run id.

Only small state lives here, in a few typed objects: the run's input, progress, waiting calls
(:class:`WaitingCalls`) and steers in :class:`RunState`; what it owes the journal, and its status, in
:class:`JournalKeeper` (the journal's segments in :class:`Segments`); its thread's turn in :class:`ThreadTurn`; its
budget waits in :class:`BudgetWaits`. :class:`CallBatch` runs a step's tool calls and :class:`PeopleWait` waits for
people's answers. Every model call and tool call is an activity
and transcripts stay in the store (ARCHITECTURE.md, "Durable-execution rules"). A run that waits for a person is
blocked on ``wait_condition``: no activity, no slot, no polling.

The journal of a run is cut into *segments*, each ending with a ``finish`` chunk: the first ends when
the run finishes or suspends; every resume opens the next one. The activity that ends a segment writes
its end (a model step that called no tool, the last call of a batch that suspended); the finish activity
does it only when none could.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pydantic
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from tempo_agents.activity_options import MODEL_STEP_DEFAULTS
from tempo_agents.deprecations import moved_name
from tempo_agents.errors import TempoAgentsError
from tempo_agents.journal import constructors, keys
from tempo_agents.journal.outbox import StepFinishNote
from tempo_agents.models.messages import Message
from tempo_agents.models.usage import Usage
from tempo_agents.tasks import TaskItem
from tempo_agents.workflows import activity_calls
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW, MODEL_STEP
from tempo_agents.workflows.budget_waits import BudgetWaits
from tempo_agents.workflows.call_batch import CallBatch
from tempo_agents.workflows.child_payloads import CHILD_SUSPENDED_SIGNAL, ChildSuspension
from tempo_agents.workflows.payloads import (
    Answer,
    BudgetAnswer,
    BudgetState,
    CarriedState,
    HandoffAccepted,
    HandoffRequest,
    ModelStepInput,
    ModelStepResult,
    PendingCall,
    ResumeAccepted,
    ResumeRequest,
    RunInput,
    RunResult,
    RunSnapshot,
)
from tempo_agents.workflows.people_wait import PeopleWait
from tempo_agents.workflows.resume_errors import AGENT_MISMATCH
from tempo_agents.workflows.run_journal import JournalKeeper
from tempo_agents.workflows.run_patches import CANCELLATION_OUTLIVES_ACTIVITIES, SEGMENTS_CLOSED_BY_ACTIVITIES
from tempo_agents.workflows.run_state import RunState
from tempo_agents.workflows.steering import (
    INTERRUPT,
    INTERRUPTED,
    RUN_FINISHED,
    STEER,
    STEERING_PATCH,
    InterruptRequest,
    SteerAccepted,
    SteerRequest,
    interrupted_record,
)
from tempo_agents.workflows.thread_payloads import GO_AHEAD_SIGNAL
from tempo_agents.workflows.thread_turn import ThreadTurn

__all__ = ["AgentRunWorkflow"]


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
        self._state = state = RunState.of(run_input)
        self._journal = JournalKeeper(state)
        self._thread = ThreadTurn(state)
        self._budget = BudgetWaits(state, self._journal, self._thread)
        self._batch = CallBatch(state, self._journal)
        self._people = PeopleWait(state, self._journal, self._thread, self._batch)

    # Queries --------------------------------------------------------------------------------

    @workflow.query(name="status")
    def status(self) -> str:
        """``running``, ``suspended``, ``completed`` or ``failed``."""
        return self._journal.status

    @workflow.query(name="steps")
    def steps(self) -> int:
        """Model steps finished so far."""
        return self._state.step

    @workflow.query(name="usage")
    def usage(self) -> Usage:
        """Token usage so far."""
        return self._state.usage

    @workflow.query(name="tasks")
    def tasks(self) -> list[TaskItem]:
        """The run's task list, as the model was last shown it (memory-backed runs with task tools)."""
        return self._state.tasks.tasks

    @workflow.query(name="mode")
    def mode(self) -> str | None:
        """The agent mode the run is in (``None`` for agents without modes)."""
        return self._state.mode

    @workflow.query(name="answers")
    def answers(self) -> list[Answer]:
        """The answers accepted so far (the latest ``MAX_CARRIED_ANSWERS`` across continue-as-new): who, what,
        when."""
        return self._state.calls.answers()

    @workflow.query(name="calls_running")
    def calls_running(self) -> int:
        """How many tool calls run now; while any do, which calls wait is not settled (the journal can show a
        suspension before the workflow has heard of it)."""
        return self._state.calls.running_count

    @workflow.query(name="children")
    def children(self) -> dict[str, str]:
        """The child run id of each call that runs (or waits) as a child workflow, by tool call id."""
        return self._batch.children.running()

    @workflow.query(name="steers_received")
    def steers_received(self) -> int:
        """How many steers the run has received (delivered, kept or refused)."""
        return self._state.steers.received

    @workflow.signal(name=CHILD_SUSPENDED_SIGNAL)
    def child_suspended(self, suspension: ChildSuspension) -> None:
        """A workflow tool of this run waits for a person."""
        self._batch.children.suspended(suspension)

    @workflow.query(name="pending")
    def pending(self) -> list[PendingCall]:
        """The calls waiting for a person (suspended calls and approval requests)."""
        return self._state.calls.pending()

    @workflow.query(name="snapshot")
    def snapshot(self) -> RunSnapshot:
        """``status``, ``mode``, ``steps``, ``usage``, ``pending``, ``tasks`` and ``answers`` at once."""
        state = self._state
        return RunSnapshot(
            status=self._journal.status,
            mode=state.mode,
            steps=state.step,
            usage=state.usage,
            pending=self.pending(),
            tasks=state.tasks.tasks,
            answers=state.calls.answers(),
            budget=self.budget(),
        )

    @workflow.query(name="budget")
    def budget(self) -> BudgetState:
        """The run's budget (raised by people's answers), its memory, and whether it waits for a raise."""
        return self._budget.state()

    @workflow.update(name="budget")
    async def answer_budget(self, answer: BudgetAnswer) -> ResumeAccepted:
        """Raise the budget of a run that waits for it (the step runs again) or end the run.

        The journal shows the wait before the workflow hears of the model step that found the limit: an answer
        that arrives while a model step runs waits for it, then is decided."""
        return await self._budget.answer(answer)

    @answer_budget.validator
    def _validate_budget_answer(self, answer: BudgetAnswer) -> None:
        self._budget.validate(answer)

    # Resume: an update (validated, acknowledged) and a signal (fire-and-forget), one path -----

    @workflow.update(name="resume")
    async def resume(self, request: ResumeRequest) -> ResumeAccepted:
        """Answer a waiting call; returns once the segment it ends is closed in the journal.

        A resume that arrives while calls run (a suspension already journaled, its activity not yet
        reported) waits for them to end, then is decided like any other.
        """
        calls = self._state.calls
        if calls.any_running:
            await workflow.wait_condition(lambda: not calls.any_running)
        call_id = calls.accept(request)
        segments = self._journal.segments
        segment = segments.current
        await workflow.wait_condition(lambda: segments.has_closed(segment))
        return ResumeAccepted(tool_call_id=call_id, after_key=keys.finish(segment))

    @resume.validator
    def _validate_resume(self, request: ResumeRequest) -> None:
        if request.agent_id is not None and request.agent_id != self._state.agent_id:
            raise ApplicationError("run belongs to another agent", type=AGENT_MISMATCH, non_retryable=True)
        self._state.calls.validate(request)

    @workflow.signal(name="resume")
    def resume_signal(self, request: ResumeRequest) -> None:
        """The same as the ``resume`` update, for callers that cannot wait for an answer; a refused one is
        journaled as a ``data-error`` chunk and the run keeps waiting."""
        self._journal.note_refused_signal(request, self._state.calls.signal(request))

    # Steering and interrupting the running run ---------------------------------------------

    @workflow.update(name=STEER)
    async def steer(self, request: SteerRequest) -> SteerAccepted:
        """Deliver a user message into the run: the model sees it at the next model step. Returns once a step has
        it (``delivered``), or at once when the run waits for a person (``kept`` for the step after the answer);
        fails with ``run-finished`` when the run ends without another step (the sender starts a new run)."""
        state = self._state
        steers = state.steers
        position = steers.receive(request, awaited=True)
        await workflow.wait_condition(
            lambda: steers.settled(position) or self._journal.status == "suspended" or state.continuing
        )
        step = steers.delivered_at(position)
        if step is None and steers.settled(position):
            raise _run_finished()
        steers.answered(position)
        if step is not None:
            return SteerAccepted(position=position, status="delivered", step=step)
        return SteerAccepted(position=position, status="kept")

    @steer.validator
    def _validate_steer(self, request: SteerRequest) -> None:
        if self._state.steers.closed:
            raise _run_finished()

    @workflow.signal(name=STEER)
    def steer_signal(self, request: SteerRequest) -> None:
        """The same as the ``tempo_agents.steer`` update, for callers that cannot wait for an answer; a steer the
        run cannot take is listed in its result's ``undelivered_steers``."""
        steers = self._state.steers
        if steers.closed:
            steers.refuse_late(request)
        else:
            steers.receive(request)

    @workflow.signal(name=GO_AHEAD_SIGNAL)
    def thread_go_ahead(self) -> None:
        """The run's thread gives it its turn: an answered run that had yielded the thread goes on."""
        self._thread.go_ahead()

    @workflow.signal(name=INTERRUPT)
    def interrupt(self, request: InterruptRequest) -> None:
        """Stop at the next step boundary (at once when the run waits for a person), keeping what the run did."""
        if self._state.interrupt is None:
            self._state.interrupt = request

    @workflow.update(name="handoff")
    async def handoff(self, request: HandoffRequest) -> HandoffAccepted:
        """Give a suspended call to a later run of the thread (auto-resume); this run then ends."""
        waiting = self._state.calls.hand_off(request)
        return HandoffAccepted(
            tool_call_id=waiting.tool_call_id,
            tool_name=waiting.tool_name,
            args=waiting.args,
            suspend_payload=waiting.suspend_payload,
            input_snapshot=waiting.input_snapshot,
        )

    @handoff.validator
    def _validate_handoff(self, request: HandoffRequest) -> None:
        self._state.calls.handoff_target(request)

    # The loop -------------------------------------------------------------------------------

    @workflow.run
    async def run(self, run_input: RunInput) -> RunResult:
        state, journal = self._state, self._journal  # the state's input has the run id filled in (a scheduled run's)
        journal.segments.take_path(workflow.patched(SEGMENTS_CLOSED_BY_ACTIVITIES))
        options = state.options
        new_messages = state.run_input.messages
        if state.run_input.carried is None:
            fork = options.fork
            fork_of = None if fork is None else (fork.run_id, fork.step)
            journal.outbox.records.append(
                constructors.start(state.run_id, state.agent_id, journal.segments.current, fork_of)
            )
        try:
            while True:
                step = state.step
                result = await self._budgeted_step(step, new_messages)
                _end_if_cancelled()
                new_messages = []
                state.usage = state.usage + result.usage
                state.projects_tasks = result.projects_tasks
                if result.thread_tasks is not None:
                    state.tasks.load(result.thread_tasks)
                if result.closed_segment:
                    journal.segments.close()
                for call in result.tool_calls:
                    if call.operation is not None:
                        state.tasks.run_tool(state.run_id, step, call, options.memory, journal.outbox)
                step_note = StepFinishNote(
                    step=step, reason=result.finish_reason, usage=result.usage, is_continued=False, segment=0
                )
                await self._batch.run(
                    [self._batch.call_input(step, call) for call in result.tool_calls if call.operation is None],
                    step_note,
                    reason_if_done="length" if step + 1 >= options.max_steps else None,
                )
                _end_if_cancelled()
                state.step = step + 1
                await self._people.until_answered(step_note)
                reason = self._end_reason(result)
                if reason:
                    return await self._complete(reason, step_note)
                journal.outbox.step_finish = step_note.model_copy(
                    update={"is_continued": True, "segment": journal.segments.current}
                )
                if workflow.info().is_continue_as_new_suggested():
                    state.continuing = True
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    workflow.continue_as_new(self._continued_input())
        except ActivityError as error:
            if isinstance(error.cause, CancelledError):  # the run was cancelled while an activity ran
                await self._abort()
                raise asyncio.CancelledError() from error
            message = activity_calls.failure_message(error)
            await self._fail(message)
            raise ApplicationError(message, type="AgentRunFailed", non_retryable=True) from None
        except asyncio.CancelledError:
            await self._abort()
            raise

    def _end_reason(self, result: ModelStepResult) -> str:
        """Why the run ends after the step that gave ``result`` and its calls (empty: it goes on). An interrupt that
        ends it here is journaled."""
        state = self._state
        called_tools = bool(result.tool_calls) or result.answered_calls > 0
        if state.ended_interrupted:
            return INTERRUPTED
        if state.handed_off:
            return "handed-off"
        if not called_tools:
            return result.finish_reason
        if state.step >= state.options.max_steps:
            return "length"
        if state.interrupted() and state.interrupt is not None:
            self._journal.outbox.records.append(interrupted_record(state.run_id, state.interrupt, state.step))
            return INTERRUPTED
        return ""

    async def _complete(self, reason: str, step_note: StepFinishNote) -> RunResult:
        """The run ends for ``reason``: its segment is closed, its thread told, and its handlers have answered."""
        state, journal = self._state, self._journal
        state.steers.close()
        journal.set_status("completed")
        if journal.segments.is_open:
            journal.outbox.step_finish = step_note.model_copy(update={"segment": journal.segments.current})
            await journal.finish_segment(reason)
        await self._thread.tell_ended("COMPLETED")
        await workflow.wait_condition(workflow.all_handlers_finished)
        return RunResult(
            run_id=state.run_id,
            finish_reason=reason,
            usage=state.usage,
            steps=state.step,
            undelivered_steers=state.steers.undelivered(),
        )

    async def _fail(self, message: str) -> None:
        """An activity failed for good: the segment ends with the error, and the thread is told."""
        self._state.steers.close()
        self._journal.set_status("failed")
        await self._journal.finish_segment("error", error=message, abandoned_step=self._state.model_step_running)
        await self._thread.tell_ended("FAILED")

    async def _budgeted_step(self, step: int, new_messages: list[Message]) -> ModelStepResult:
        """A model step; when it finds a budget limit reached and the policy waits, wait for a person and run
        it again with the raised budget (or end the run: the result then says ``budget-exceeded``)."""
        result = await self._model_step(step, new_messages)
        while self._budget.waits_for(result):
            answer = await self._budget.wait(result)
            if answer.action == "end":
                return result.model_copy(update={"closed_segment": False, "budget_stop": None})
            result = await self._model_step(step, new_messages)
        return result

    async def _model_step(self, step: int, new_messages: list[Message]) -> ModelStepResult:
        state, journal = self._state, self._journal
        run_input = state.run_input
        signals = state.tasks.refresh_signals() if state.projects_tasks else []
        close = journal.segments.model_step_close(step + 1, state.usage)
        options = run_input.model_step_activity or MODEL_STEP_DEFAULTS
        if state.steers.any_queued and workflow.patched(STEERING_PATCH):
            state.steers.deliver(run_input.run_id, step, journal.outbox)
        state.model_step_running = step
        result = await activity_calls.execute(
            MODEL_STEP,
            ModelStepInput(
                run_id=run_input.run_id,
                agent_id=run_input.agent_id,
                step=step,
                options=run_input.options,
                new_messages=new_messages,
                outbox=journal.take_outbox(),
                mode=state.mode,
                state_signals=signals,
                close=close,
                now=workflow.now(),
                budget_waits=self._budget.waits,
                budget_answered=self._budget.answered,
                catch_up=self._thread.catch_up,
            ),
            options=options,
            result_type=ModelStepResult,
            cancellation_type=activity_calls.WAIT_FOR_CANCELLATION,
            summary=f"model step {step}",
        )
        state.model_step_running = None
        self._budget.answered = None
        self._thread.catch_up = None
        return result

    def _continued_input(self) -> RunInput:
        state, journal = self._state, self._journal
        return state.run_input.model_copy(
            update={
                "messages": [],
                "carried": CarriedState(
                    step=state.step,
                    usage=state.usage,
                    segment=journal.segments.current,
                    mode=state.mode,
                    outbox=journal.outbox,
                    tasks=state.tasks.tasks,
                    task_signal_state=state.tasks.signal_state,
                    state_signals=state.tasks.signals,
                    projects_tasks=state.projects_tasks,
                    answers=state.calls.carried_answers(),
                    budget_waits=self._budget.waits,
                    steers=state.steers.carried() if state.steers.received else None,
                    yielded_thread=self._thread.yielded,
                ),
            }
        )

    async def _abort(self) -> None:
        """Cancelled from outside: running tools were told (``ctx.cancelled``); the journal says so, and the thread
        is told. A run cancelled while it waits for people has closed its segment already: the end goes into a
        segment of its own, so readers that followed the run to the suspension see ``abort`` and the ``finish``
        after it."""
        state, journal = self._state, self._journal
        journal.start_next_segment()
        journal.outbox.records.append(constructors.abort(state.run_id, journal.segments.current))
        state.steers.close()
        journal.set_status("failed")
        await journal.finish_segment("aborted")
        await self._thread.tell_ended("CANCELED")


def _end_if_cancelled() -> None:
    """A run cancelled while its activities ran ends cancelled even when they completed: an activity told to stop
    may finish first, and the SDK then hands over its result as if nothing had been asked (the workflow waits for
    its activities to stop), so the cancellation is looked for again once their results are in."""
    if workflow.cancellation_reason() is not None and workflow.patched(CANCELLATION_OUTLIVES_ACTIVITIES):
        raise asyncio.CancelledError()


def _run_finished() -> ApplicationError:
    return ApplicationError(
        "The run finishes without another model step: start a new run with this message.",
        type=RUN_FINISHED,
        non_retryable=True,
    )


def __getattr__(name: str) -> Any:
    """A name the previous release had here and that moved: found where it lives now, with a warning."""
    return moved_name(__name__, name)
