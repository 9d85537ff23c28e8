"""AgentRunWorkflow: the durable agent loop. Workflow id == run id.

Only small state lives here (step counter, usage, waiting calls, chunks still to journal); every
model call and tool call is an activity and transcripts stay in the store (DESIGN.md rules 1, 2).
A run that waits for a person is blocked on ``wait_condition``: no activity, no slot, no polling.

The journal of a run is cut into *segments*, each ending with a ``finish`` chunk: the first ends
when the run finishes or suspends; every resume opens the next one.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from tempo_agents.models.usage import Usage
from tempo_agents.tools.builtin.task_list import TaskItem
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.activity_names import FINISH_RUN, JOURNAL, MODEL_STEP, TOOL_CALL
from tempo_agents.workflows.payloads import (
    CarriedState,
    FinishInput,
    HandoffAccepted,
    HandoffRequest,
    JournalInput,
    JournalRecord,
    ModelStepInput,
    ModelStepResult,
    PendingCall,
    Resolution,
    ResumeAccepted,
    ResumeRequest,
    RunInput,
    RunResult,
    StepFinishNote,
    ToolCallInput,
    ToolCallRequest,
    ToolCallResult,
    WorkflowWrites,
)
from tempo_agents.workflows.resume_errors import (
    AMBIGUOUS_TOOL_CALL,
    INVALID_APPROVAL,
    NOT_SUSPENDED,
    TOOL_CALL_NOT_SUSPENDED,
)
from tempo_agents.workflows.search_attributes import RunStatus
from tempo_agents.workflows.task_state import TaskState

MODEL_STEP_TIMEOUT = timedelta(minutes=10)
TOOL_CALL_TIMEOUT = timedelta(minutes=10)
HEARTBEAT_TIMEOUT = timedelta(seconds=30)
WAIT_FOR_CANCELLATION = workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
"""A cancelled run journals ``abort`` only once its running model step and tools have stopped."""
"""Activities heartbeat every few seconds: a dead worker is noticed, and cancellation reaches them."""
FINISH_TIMEOUT = timedelta(minutes=1)
MODEL_STEP_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=30), maximum_attempts=5
)
TOOL_CALL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=30), maximum_attempts=3
)
FINISH_RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_attempts=10)


@workflow.defn(name="AgentRunWorkflow", failure_exception_types=[Exception])
class AgentRunWorkflow:
    """One agent run: model step, the step's tool calls in parallel, wait for people, repeat."""

    @workflow.init
    def __init__(self, run_input: RunInput) -> None:
        carried = run_input.carried or CarriedState(step=0, usage=Usage())
        self._run_input = run_input
        self._step = carried.step
        self._usage = carried.usage
        self._segment = carried.segment
        self._mode = carried.mode if run_input.carried is not None else run_input.options.mode
        self._tasks = TaskState(carried.tasks, carried.task_signal_state, carried.state_signals)
        self._projects_tasks = carried.projects_tasks
        self._writes = carried.writes
        self._pending = list(carried.pending)
        self._previous_step = carried.previous_step
        self._status: RunStatus = "running"
        self._waiting: dict[str, PendingCall] = {}
        self._resolutions: dict[str, Resolution] = {}
        self._answered: dict[str, PendingCall] = {}
        self._handed_off = False
        self._last_closed_segment = carried.segment - 1
        self._notes: list[JournalRecord] = []

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

    @workflow.query(name="pending")
    def pending(self) -> list[PendingCall]:
        """The calls waiting for a person (suspended calls and approval requests)."""
        return [call for call_id, call in self._waiting.items() if call_id not in self._resolutions]

    # Resume: an update (validated, acknowledged) and a signal (fire-and-forget), one path -----

    @workflow.update(name="resume")
    async def resume(self, request: ResumeRequest) -> ResumeAccepted:
        """Answer a waiting call; returns once the segment it ends is closed in the journal."""
        call_id = self._accept(request)
        segment = self._segment
        await workflow.wait_condition(lambda: self._last_closed_segment >= segment)
        return ResumeAccepted(tool_call_id=call_id, after_key=f"finish:{segment}")

    @resume.validator
    def _validate_resume(self, request: ResumeRequest) -> None:
        self._target(request)

    @workflow.signal(name="resume")
    def resume_signal(self, request: ResumeRequest) -> None:
        """The same as the ``resume`` update, for callers that cannot wait for an answer."""
        try:
            self._accept(request)
        except ApplicationError as error:
            chunk = {
                "type": "data-error",
                "runId": self._run_input.run_id,
                "from": "SYSTEM",
                "data": {
                    "kind": "resume-rejected",
                    "code": error.type,
                    "message": error.message,
                    "toolCallId": request.tool_call_id,
                },
            }
            self._notes.append(JournalRecord(chunk=chunk))

    @workflow.update(name="handoff")
    async def handoff(self, request: HandoffRequest) -> HandoffAccepted:
        """Give a suspended call to a later run of the thread (auto-resume); this run then ends."""
        call_id = self._handoff_target(request)
        waiting = self._waiting[call_id]
        self._resolutions[call_id] = Resolution(action="handoff", data={"runId": request.by_run_id})
        return HandoffAccepted(
            tool_call_id=call_id,
            tool_name=waiting.tool_name,
            args=waiting.args,
            suspend_payload=waiting.suspend_payload,
            input_snapshot=waiting.input_snapshot,
        )

    @handoff.validator
    def _validate_handoff(self, request: HandoffRequest) -> None:
        self._handoff_target(request)

    def _handoff_target(self, request: HandoffRequest) -> str:
        for call_id, waiting in self._waiting.items():
            open_call = call_id not in self._resolutions and not waiting.requires_approval
            if open_call and waiting.tool_name == request.tool_name:
                return call_id

        raise ApplicationError(
            f'no suspended call of tool "{request.tool_name}"', type=TOOL_CALL_NOT_SUSPENDED, non_retryable=True
        )

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
        if self._waiting[call_id].requires_approval and request.action == "resume":
            data = request.data
            if not isinstance(data, dict) or not isinstance(data.get("approved"), bool):
                raise ApplicationError(
                    'an approval request is answered with {"approved": true} or {"approved": false}',
                    type=INVALID_APPROVAL,
                    non_retryable=True,
                )
        return call_id

    def _accept(self, request: ResumeRequest) -> str:
        call_id = self._target(request)
        waiting = self._waiting[call_id]
        if waiting.requires_approval:
            approved = request.action == "approve" or (
                request.action == "resume" and isinstance(request.data, dict) and request.data.get("approved") is True
            )
            self._resolutions[call_id] = Resolution(action="approve" if approved else "decline", reason=request.reason)
        elif request.action == "resume":
            self._resolutions[call_id] = Resolution(action="resume", data=request.data)
        else:
            self._resolutions[call_id] = Resolution(action="resume", data={"approved": request.action == "approve"})
        return call_id

    # The loop -------------------------------------------------------------------------------

    @workflow.run
    async def run(self, run_input: RunInput) -> RunResult:
        options = run_input.options
        new_messages = run_input.messages
        if run_input.carried is None:
            self._pending.append(self._start_record())
        try:
            while True:
                step = self._step
                signals = self._tasks.refresh_signals() if self._projects_tasks else []
                writes, self._writes = self._writes, WorkflowWrites()
                result = await workflow.execute_activity(
                    MODEL_STEP,
                    ModelStepInput(
                        run_id=run_input.run_id,
                        agent_id=run_input.agent_id,
                        step=step,
                        options=options,
                        new_messages=new_messages,
                        pending=self._pending,
                        previous_step=self._previous_step,
                        mode=self._mode,
                        writes=writes,
                        state_signals=signals,
                    ),
                    result_type=ModelStepResult,
                    start_to_close_timeout=MODEL_STEP_TIMEOUT,
                    heartbeat_timeout=HEARTBEAT_TIMEOUT,
                    cancellation_type=WAIT_FOR_CANCELLATION,
                    retry_policy=MODEL_STEP_RETRY,
                )
                new_messages, self._pending, self._previous_step = [], [], None
                self._usage = self._usage + result.usage
                self._projects_tasks = result.projects_tasks
                if result.thread_tasks is not None:
                    self._tasks.load(result.thread_tasks)
                for call in result.tool_calls:
                    if call.operation is not None:
                        self._tasks.run_tool(run_input.run_id, step, call, options.memory, self._pending, self._writes)
                await self._run_calls(
                    [
                        ToolCallInput(
                            run_id=run_input.run_id,
                            agent_id=run_input.agent_id,
                            step=step,
                            call=call,
                            options=options,
                            mode=self._mode,
                        )
                        for call in result.tool_calls
                        if call.operation is None
                    ]
                )
                self._step = step + 1
                await self._wait_for_people(step, result.usage)
                called_tools = bool(result.tool_calls) or result.answered_calls > 0
                if self._handed_off:
                    reason = "handed-off"
                elif not called_tools:
                    reason = result.finish_reason
                elif self._step >= options.max_steps:
                    reason = "length"
                else:
                    reason = ""
                self._previous_step = StepFinishNote(
                    step=step,
                    reason=result.finish_reason,
                    usage=result.usage,
                    is_continued=not reason,
                    segment=self._segment,
                )
                if reason:
                    self._set_status("completed")
                    await self._close_segment(reason)
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    return RunResult(run_id=run_input.run_id, finish_reason=reason, usage=self._usage, steps=self._step)
                if workflow.info().is_continue_as_new_suggested():
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    workflow.continue_as_new(
                        RunInput(
                            run_id=run_input.run_id,
                            agent_id=run_input.agent_id,
                            messages=[],
                            options=options,
                            carried=CarriedState(
                                step=self._step,
                                usage=self._usage,
                                segment=self._segment,
                                mode=self._mode,
                                pending=self._pending,
                                previous_step=self._previous_step,
                                tasks=self._tasks.tasks,
                                task_signal_state=self._tasks.signal_state,
                                state_signals=self._tasks.signals,
                                projects_tasks=self._projects_tasks,
                                writes=self._writes,
                            ),
                        )
                    )
        except ActivityError as error:
            if isinstance(error.cause, CancelledError):  # the run was cancelled while an activity ran
                await self._abort(run_input)
                raise asyncio.CancelledError() from error
            message = _failure_message(error)
            self._set_status("failed")
            await self._close_segment("error", error=message)

            raise ApplicationError(message, type="AgentRunFailed", non_retryable=True) from error
        except asyncio.CancelledError:
            await self._abort(run_input)
            raise

    async def _abort(self, run_input: RunInput) -> None:
        """Cancelled from outside: running tools were told (``ctx.cancelled``); the journal says so."""
        abort = {"type": "abort", "runId": run_input.run_id, "from": "AGENT", "payload": {}}
        self._pending.append(JournalRecord(chunk=abort, key=f"abort:{self._segment}"))
        self._set_status("failed")
        await self._close_segment("aborted")

    async def _run_calls(self, inputs: list[ToolCallInput]) -> None:
        results = await asyncio.gather(
            *(
                workflow.execute_activity(
                    TOOL_CALL,
                    call_input,
                    result_type=ToolCallResult,
                    start_to_close_timeout=TOOL_CALL_TIMEOUT,
                    heartbeat_timeout=HEARTBEAT_TIMEOUT,
                    cancellation_type=WAIT_FOR_CANCELLATION,
                    retry_policy=TOOL_CALL_RETRY,
                )
                for call_input in inputs
            )
        )
        now = workflow.now()
        for call_input, result in zip(inputs, results, strict=True):
            call = call_input.call
            if result.switch_mode_to is not None and result.switch_mode_to != self._mode:
                self._switch_mode(result.switch_mode_to)
            if result.status == "suspended" and result.suspension is not None:
                suspension = result.suspension
                expires = suspension.expires_in_seconds
                self._waiting[call.tool_call_id] = PendingCall(
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    args=call.args,
                    suspend_payload=suspension.suspend_payload,
                    requires_approval=suspension.kind == "approval",
                    resume_schema=suspension.resume_schema,
                    suspended_at=now,
                    expires_at=None if expires is None else now + timedelta(seconds=expires),
                    round=call_input.round,
                    step=call_input.step,
                    index=call.index,
                    input_snapshot=suspension.input_snapshot,
                )
            elif result.status == "resume-rejected":
                self._waiting[call.tool_call_id] = self._answered[call.tool_call_id]

    async def _wait_for_people(self, step: int, usage: Usage) -> None:
        while self._waiting:
            if not self._resolutions:
                self._previous_step = StepFinishNote(
                    step=step, reason="suspended", usage=usage, is_continued=False, segment=self._segment
                )
                self._set_status("suspended")
                await self._close_segment("suspended")
                while not self._resolutions:
                    await self._sleep_until_answered()
                    records, self._notes = self._notes, []
                    await self._journal(records)

            batch, self._resolutions = self._resolutions, {}
            self._handed_off = self._handed_off or any(r.action == "handoff" for r in batch.values())

            self._answered = {call_id: self._waiting.pop(call_id) for call_id in batch}
            if self._last_closed_segment == self._segment:
                self._segment += 1
                self._pending.append(self._start_record())
            self._set_status("running")
            records, self._pending = self._pending, []
            await self._journal(records)
            await self._run_calls(
                [
                    ToolCallInput(
                        run_id=self._run_input.run_id,
                        agent_id=self._run_input.agent_id,
                        step=waiting.step,
                        call=ToolCallRequest(
                            tool_call_id=waiting.tool_call_id,
                            tool_name=waiting.tool_name,
                            args=waiting.args,
                            index=waiting.index,
                        ),
                        options=self._run_input.options,
                        round=waiting.round + 1,
                        resolution=batch[call_id],
                        suspend_payload=waiting.suspend_payload,
                        input_snapshot=waiting.input_snapshot,
                        mode=self._mode,
                    )
                    for call_id, waiting in self._answered.items()
                ]
            )

    async def _sleep_until_answered(self) -> None:
        while not self._resolutions and not self._notes:
            deadlines = [call.expires_at for call in self._waiting.values() if call.expires_at is not None]
            timeout = None
            if deadlines:
                timeout = max(timedelta(0), min(deadlines) - workflow.now())
            try:
                await workflow.wait_condition(lambda: bool(self._resolutions or self._notes), timeout=timeout)
            except TimeoutError:
                now = workflow.now()
                for call_id, call in self._waiting.items():
                    if call.expires_at is not None and call.expires_at <= now:
                        self._resolutions[call_id] = Resolution(
                            action="decline" if call.requires_approval else "expire", expired=True
                        )

    def _switch_mode(self, mode: str) -> None:
        chunk = {
            "type": "data-mode",
            "runId": self._run_input.run_id,
            "from": "SYSTEM",
            "data": {"mode": mode, "previousMode": self._mode},
        }
        self._pending.append(JournalRecord(chunk=chunk, key=f"mode:{self._step}:{mode}"))
        self._mode = mode

    def _start_record(self) -> JournalRecord:

        run_input = self._run_input
        chunk = {
            "type": "start",
            "runId": run_input.run_id,
            "from": "AGENT",
            "payload": {"agentId": run_input.agent_id},
        }
        return JournalRecord(chunk=chunk, key=f"start:{self._segment}")

    async def _journal(self, records: list[JournalRecord]) -> None:
        if records:
            await workflow.execute_local_activity(
                JOURNAL,
                JournalInput(run_id=self._run_input.run_id, records=records),
                start_to_close_timeout=FINISH_TIMEOUT,
                retry_policy=FINISH_RETRY,
            )

    async def _close_segment(self, reason: str, *, error: str | None = None) -> None:
        run_input = self._run_input
        records = [*self._pending, *self._notes]
        previous_step = self._previous_step
        writes = self._writes
        self._pending, self._notes, self._previous_step, self._writes = [], [], None, WorkflowWrites()
        await workflow.execute_activity(
            FINISH_RUN,
            FinishInput(
                run_id=run_input.run_id,
                agent_id=run_input.agent_id,
                options=run_input.options,
                reason=reason,
                usage=self._usage,
                steps=self._step,
                segment=self._segment,
                error=error,
                pending=records,
                previous_step=previous_step,
                writes=writes,
            ),
            start_to_close_timeout=FINISH_TIMEOUT,
            retry_policy=FINISH_RETRY,
        )
        self._last_closed_segment = self._segment

    def _set_status(self, status: RunStatus) -> None:
        if status != self._status:
            self._status = status
            workflow.upsert_search_attributes([search_attributes.STATUS.value_set(status)])
            workflow.upsert_memo({"pending": [call.to_wire() for call in self.pending()]})


def _failure_message(error: ActivityError) -> str:
    cause: BaseException | None = error.cause
    while isinstance(cause, ActivityError) and cause.cause is not None:
        cause = cause.cause
    if isinstance(cause, ApplicationError):
        return cause.message
    return str(cause or error)
