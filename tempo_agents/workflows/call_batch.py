"""Running a batch of a run's tool calls: a model step's calls, or the answered calls taken up again.

The calls of a batch run in parallel, each as a tool-call activity (or a local activity, as its tool's options say),
an answered call whose child waits by resuming its child, a ``delegate`` answer by starting one
(``child_tools.py``). The first call takes the outbox; each is told how to end the segment should it find itself the
last of the batch to end (``Segments.batch_close``). A call whose attempts ran out ends with a tool error and the run
goes on; cancellation and configuration errors end the run.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from tempo_agents.activity_options import TOOL_CALL_DEFAULTS
from tempo_agents.journal import constructors, keys
from tempo_agents.journal.outbox import JournalOutbox, StepFinishNote
from tempo_agents.workflows import activity_calls
from tempo_agents.workflows.activity_names import TOOL_CALL
from tempo_agents.workflows.child_tools import ChildCalls
from tempo_agents.workflows.payloads import PendingCall, Resolution, ToolCallInput, ToolCallRequest, ToolCallResult
from tempo_agents.workflows.run_journal import JournalKeeper
from tempo_agents.workflows.run_patches import APPROVED_ARGUMENTS
from tempo_agents.workflows.run_state import RunState

__all__ = ["CallBatch"]


class CallBatch:
    """Runs the run's batches of tool calls; ``children`` are the calls that go on as child workflows."""

    def __init__(self, state: RunState, journal: JournalKeeper) -> None:
        self._state = state
        self._journal = journal
        self._calls = state.calls
        self.children = ChildCalls()

    def call_input(self, step: int, call: ToolCallRequest) -> ToolCallInput:
        """The input of a call model step ``step`` made."""
        state = self._state
        return ToolCallInput(
            run_id=state.run_id, agent_id=state.agent_id, step=step, call=call, options=state.options, mode=state.mode
        )

    def resumed_input(self, waiting: PendingCall, resolution: Resolution) -> ToolCallInput:
        """The input of a call taken up again with its answer: its next round, with the arguments it runs with and
        the activity options it keeps."""
        state = self._state
        call = ToolCallRequest(
            tool_call_id=waiting.tool_call_id,
            tool_name=waiting.tool_name,
            args=_approved_args(waiting, resolution),
            index=waiting.index,
            activity=self._calls.resumed_options(waiting.tool_call_id),
        )
        return ToolCallInput(
            run_id=state.run_id,
            agent_id=state.agent_id,
            step=waiting.step,
            call=call,
            options=state.options,
            mode=state.mode,
            round=waiting.round + 1,
            refusals=self._calls.refusals(waiting.tool_call_id),
            resolution=resolution,
            suspend_payload=waiting.suspend_payload,
            input_snapshot=waiting.input_snapshot,
        )

    async def run(self, inputs: list[ToolCallInput], step_note: StepFinishNote, reason_if_done: str | None) -> None:
        """Run a batch of calls in parallel. The first takes the outbox; each is told how to end the
        segment should it find itself the last of the batch to end. ``resume`` signals kept while it ran are
        decided once it has ended."""
        if not inputs:
            return
        journal, calls = self._journal, self._calls
        batch = journal.segments.batch_close(
            [keys.tool_call_outcome(i.step, i.call.tool_call_id, i.round, i.refusals) for i in inputs],
            step_note,
            self._state.usage,
            reason_if_done,
            suspended_elsewhere=calls.any_waiting,
        )
        outbox = journal.take_outbox()
        inputs = [
            i.model_copy(update={"batch": batch, "outbox": outbox if n == 0 else JournalOutbox()})
            for n, i in enumerate(inputs)
        ]
        calls.batch_started(i.call.tool_call_id for i in inputs)
        try:
            results = await asyncio.gather(*(self._tool_call(i) for i in inputs), return_exceptions=True)
        finally:
            calls.batch_stopped()
        now = workflow.now()
        for call_input, result in zip(inputs, results, strict=True):
            if isinstance(result, BaseException):
                self._call_lost(call_input, result, given_outbox=outbox if call_input is inputs[0] else None)
                continue
            self._call_ended(call_input, result, now)
        for request in calls.take_deferred():
            journal.note_refused_signal(request, calls.signal(request))

    async def _tool_call(self, call_input: ToolCallInput) -> ToolCallResult:
        if self.children.owns(call_input):
            return await self.children.resume(call_input)
        options = call_input.call.activity or TOOL_CALL_DEFAULTS
        result = await activity_calls.execute(
            TOOL_CALL,
            call_input,
            options=options,
            result_type=ToolCallResult,
            cancellation_type=activity_calls.WAIT_FOR_CANCELLATION,
            summary=f"tool {call_input.call.tool_name} (step {call_input.step})",
        )
        if result.status == "delegate" and result.child is not None:
            result = await self.children.start(call_input, result.child)
        return result

    def _call_ended(self, call_input: ToolCallInput, result: ToolCallResult, now: datetime) -> None:
        if result.closed_segment:
            self._journal.segments.close()
        if result.switch_mode_to is not None and result.switch_mode_to != self._state.mode:
            self._switch_mode(result.switch_mode_to)
        self._calls.call_ended(call_input, result, now)

    def _switch_mode(self, mode: str) -> None:
        state = self._state
        self._journal.outbox.records.append(constructors.mode_changed(state.run_id, state.step, mode, state.mode))
        state.mode = mode

    def _call_lost(self, call_input: ToolCallInput, error: BaseException, given_outbox: JournalOutbox | None) -> None:
        """A call whose attempts ran out (its workers kept dying) ends with a tool error; the run goes on.
        Cancellation and configuration errors end the run."""
        if not isinstance(error, ActivityError) or isinstance(error.cause, CancelledError):
            raise error
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.non_retryable:
            raise error
        journal = self._journal
        if given_outbox is not None:  # the outbox this call carried may not have been written
            journal.outbox = given_outbox.then(journal.outbox)
        call = call_input.call
        attempts = (call.activity or TOOL_CALL_DEFAULTS).maximum_attempts
        message = constructors.tool_stopped_message(call.tool_name, attempts, activity_calls.failure_message(error))
        journal.end_call_with_error(call_input.step, call.tool_call_id, call.tool_name, call.args, call.index, message)


def _approved_args(waiting: PendingCall, resolution: Resolution) -> Any:
    """The arguments an answered call runs with: as the model made them, or as the approver changed them."""
    if resolution.args is not None and workflow.patched(APPROVED_ARGUMENTS):
        return resolution.args
    return waiting.args
