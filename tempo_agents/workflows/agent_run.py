"""AgentRunWorkflow: the durable agent loop. Workflow id == run id.

Only small state lives here (step counter, usage, chunks waiting to be journaled); every model
call and tool call is an activity, and transcripts stay in the store (DESIGN.md rules 1, 2).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from tempo_agents.models.usage import Usage
from tempo_agents.workflows.activity_names import FINISH_RUN, MODEL_STEP, TOOL_CALL
from tempo_agents.workflows.payloads import (
    CarriedState,
    FinishInput,
    JournalRecord,
    ModelStepInput,
    ModelStepResult,
    RunInput,
    RunResult,
    StepFinishNote,
    ToolCallInput,
    ToolCallResult,
)

MODEL_STEP_TIMEOUT = timedelta(minutes=10)
TOOL_CALL_TIMEOUT = timedelta(minutes=10)
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
    """One agent run: model step, tool calls of that step in parallel, repeat, finish."""

    @workflow.init
    def __init__(self, run_input: RunInput) -> None:
        carried = run_input.carried or CarriedState(step=0, usage=Usage())
        self._step = carried.step
        self._usage = carried.usage
        self._pending = list(carried.pending)
        self._previous_step = carried.previous_step
        self._status = "running"

    @workflow.query(name="status")
    def status(self) -> str:
        """``running``, ``completed`` or ``failed``."""
        return self._status

    @workflow.query(name="steps")
    def steps(self) -> int:
        """Model steps finished so far."""
        return self._step

    @workflow.query(name="usage")
    def usage(self) -> Usage:
        """Token usage so far."""
        return self._usage

    @workflow.run
    async def run(self, run_input: RunInput) -> RunResult:
        options = run_input.options
        new_messages = run_input.messages
        if run_input.carried is None:
            start = {
                "type": "start",
                "runId": run_input.run_id,
                "from": "AGENT",
                "payload": {"agentId": run_input.agent_id},
            }
            self._pending.append(JournalRecord(chunk=start, key="start"))
        try:
            while True:
                step = self._step
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
                    ),
                    result_type=ModelStepResult,
                    start_to_close_timeout=MODEL_STEP_TIMEOUT,
                    retry_policy=MODEL_STEP_RETRY,
                )
                new_messages, self._pending, self._previous_step = [], [], None
                self._usage = self._usage + result.usage
                if result.tool_calls:
                    await asyncio.gather(
                        *(
                            workflow.execute_activity(
                                TOOL_CALL,
                                ToolCallInput(
                                    run_id=run_input.run_id,
                                    agent_id=run_input.agent_id,
                                    step=step,
                                    call=call,
                                    options=options,
                                ),
                                result_type=ToolCallResult,
                                start_to_close_timeout=TOOL_CALL_TIMEOUT,
                                retry_policy=TOOL_CALL_RETRY,
                            )
                            for call in result.tool_calls
                        )
                    )
                self._step = step + 1
                called_tools = bool(result.tool_calls) or result.answered_calls > 0
                if not called_tools:
                    reason = result.finish_reason
                elif self._step >= options.max_steps:
                    reason = "length"
                else:
                    reason = ""
                self._previous_step = StepFinishNote(
                    step=step, reason=result.finish_reason, usage=result.usage, is_continued=not reason
                )
                if reason:
                    return await self._finish(run_input, reason)
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
                                pending=self._pending,
                                previous_step=self._previous_step,
                            ),
                        )
                    )
        except ActivityError as error:
            message = _failure_message(error)
            await self._finish(run_input, "error", error=message)
            raise ApplicationError(message, type="AgentRunFailed", non_retryable=True) from error

    async def _finish(self, run_input: RunInput, reason: str, *, error: str | None = None) -> RunResult:
        await workflow.execute_activity(
            FINISH_RUN,
            FinishInput(
                run_id=run_input.run_id,
                agent_id=run_input.agent_id,
                options=run_input.options,
                reason=reason,
                usage=self._usage,
                steps=self._step,
                error=error,
                pending=self._pending,
                previous_step=self._previous_step,
            ),
            start_to_close_timeout=FINISH_TIMEOUT,
            retry_policy=FINISH_RETRY,
        )
        self._pending, self._previous_step = [], None
        self._status = "failed" if error is not None else "completed"
        await workflow.wait_condition(workflow.all_handlers_finished)
        return RunResult(
            run_id=run_input.run_id, finish_reason=reason, usage=self._usage, steps=self._step, error=error
        )


def _failure_message(error: ActivityError) -> str:
    cause: BaseException | None = error.cause
    while isinstance(cause, ActivityError) and cause.cause is not None:
        cause = cause.cause
    if isinstance(cause, ApplicationError):
        return cause.message
    return str(cause or error)
