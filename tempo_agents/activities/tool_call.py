"""The tool-call activity: approval, hooks, validation, execute, suspension and ``to_model_output``.

Every way a call can end (result, error, suspension, approval request, declined, refused resume data) is
recorded in one store transaction together with the call's saved outcome, so a retry after a lost worker
answers from the store and a tool whose result is saved never runs again (ARCHITECTURE.md, "Crash safety").
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from temporalio import activity

from tempo_agents.activities._running import attempt, is_local, may_have_run_before
from tempo_agents.activities.handoff import CallHandoff
from tempo_agents.activities.local_starts import saved_or_counted_start
from tempo_agents.activities.segment_close import close_segment
from tempo_agents.activity_options import TOOL_CALL_DEFAULTS
from tempo_agents.agent.approval import ApprovalRequest
from tempo_agents.agent.auto_resume import is_eligible, split_resume_fields
from tempo_agents.agent.hooks import merge_hooks, run_with_hooks
from tempo_agents.journal import constructors, keys
from tempo_agents.journal.writer import JournalToolWriter, RunJournal, outbox_writes, store_outbox_writes
from tempo_agents.models.messages import Message, ToolResultPart
from tempo_agents.store.base import ChunkWrite, SavedOutcome, TranscriptEntry, WaitingCall, WaitingChange
from tempo_agents.telemetry.saved_fields import SUSPENDED_AT_FIELD
from tempo_agents.tools._validation import is_validation_result, validate_input, validate_resume_data
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.suspension import (
    APPROVAL_EXPIRED_RESULT,
    APPROVAL_RESUME_SCHEMA,
    DECLINED_RESULT,
    Suspender,
    schema_string,
)
from tempo_agents.tools.tool import Tool
from tempo_agents.tools.transform import Slot, project
from tempo_agents.tools.user_code import call_user_function
from tempo_agents.workflows.child_payloads import CHILD_RUN_CHUNK, ChildStart
from tempo_agents.workflows.payloads import (
    HandoffAccepted,
    PendingCall,
    Resolution,
    Suspension,
    ToolCallInput,
    ToolCallResult,
)

if TYPE_CHECKING:
    from tempo_agents.agent.agent import Agent
    from tempo_agents.agent.registry import Registry

to_jsonable = constructors.to_jsonable


class _Call:
    """One execution of a tool call: where its chunks and transcript entry go."""

    def __init__(self, registry: Registry, call_input: ToolCallInput, *, attempt: int = 1) -> None:
        self.registry = registry
        self.input = call_input
        self.attempt = attempt
        """``ctx.attempt``: the activity's attempt, or the count of a local call's starts."""
        self.agent: Agent = registry.agent(call_input.agent_id)
        self.tool: Tool = self.agent.tools[call_input.call.tool_name]
        self.journal = RunJournal(registry.store, call_input.run_id)
        call = call_input.call
        self.base = {"toolCallId": call.tool_call_id, "toolName": call.tool_name}
        resolution = call_input.resolution
        answered_by = resolution.answered_by if resolution is not None else None
        self.answer: dict[str, Any] = {"answeredBy": answered_by} if answered_by is not None else {}
        """Added to the chunk that ends an answered call: who answered it."""
        self.transform = self.agent.transform_for(call.tool_name)

    def outcome_key(self, chunk_type: str) -> str:
        return keys.call_outcome(self.input.step, self.input.call.tool_call_id, chunk_type)

    def round_key(self, what: str) -> str:
        return keys.call_round(self.input.step, self.input.call.tool_call_id, self.input.round, what)

    def transcript_entry(self, message: dict[str, Any], memory: dict[str, Any] | None = None) -> TranscriptEntry:
        """The call's place in the transcript (after the step's assistant message)."""
        index = self.input.call.index
        return TranscriptEntry(self.input.step, f"tool-{index:04d}", 1 + index, message, memory)

    async def end(
        self, result: ToolCallResult, writes: Sequence[ChunkWrite], entries: Sequence[TranscriptEntry] = ()
    ) -> ToolCallResult:
        """Record how the call ended, its chunks and its saved outcome, in one transaction."""
        await self.journal.flush_text()
        call = self.input.call
        key = keys.tool_call_outcome(self.input.step, call.tool_call_id, self.input.round)
        saved = result.model_dump(mode="json", by_alias=True)
        if result.status == "suspended":  # for the time-waiting metric, read when the call is resumed
            saved[SUSPENDED_AT_FIELD] = time.time()
        await self.registry.store.record(
            self.input.run_id, entries, writes, SavedOutcome(key, saved), waiting=self.waiting_change(result)
        )
        return result

    def waiting_change(self, result: ToolCallResult) -> WaitingChange | None:
        """The call waits (it suspended, or its resume data was refused and it waits again), or no longer does
        (an answered call ended); ``None`` for a call that never waited."""
        if result.status == "suspended" and result.suspension is not None:
            return WaitingChange(waits=[self.waiting_call(result.suspension, self.input.round)])
        if result.status == "resume-rejected":
            again = Suspension(
                kind="suspension",
                tool_id=self.tool.id,
                suspend_payload=self.input.suspend_payload,
                resume_schema=schema_string(self.tool.resume_schema),
                input_snapshot=self.input.input_snapshot,
            )
            return WaitingChange(waits=[self.waiting_call(again, max(self.input.round - 1, 0))])
        if self.input.resolution is not None:
            return WaitingChange(answered=[self.input.call.tool_call_id])
        return None

    def waiting_call(self, suspension: Suspension, call_round: int) -> WaitingCall:
        """The call as the store lists it while it waits (the ``pending`` query's view of it)."""
        call = self.input.call
        now = datetime.now(UTC)
        expires = suspension.expires_in_seconds
        pending = PendingCall(
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            tool_id=suspension.tool_id,
            args=call.args,
            suspend_payload=suspension.suspend_payload,
            requires_approval=suspension.kind == "approval",
            resume_schema=suspension.resume_schema,
            suspended_at=now,
            expires_at=None if expires is None else now + timedelta(seconds=expires),
            round=call_round,
            step=self.input.step,
            index=call.index,
            input_snapshot=suspension.input_snapshot,
        )
        memory = self.input.options.memory
        return WaitingCall(
            run_id=self.input.run_id,
            tool_call_id=call.tool_call_id,
            task_queue=activity.info().task_queue if activity.in_activity() else "",
            agent_id=self.input.agent_id,
            thread_id=memory.thread if memory is not None else None,
            resource_id=memory.resource if memory is not None else None,
            call=pending.to_wire(),
            suspended_at=now.timestamp(),
        )

    async def shown(self, slot: Slot, raw: Any, **payload: Any) -> Any:
        """``raw`` as clients may see it (the display projection)."""
        call = self.input.call
        return await project(
            self.transform, "display", slot, raw, tool_name=call.tool_name, tool_call_id=call.tool_call_id, **payload
        )

    async def kept(self, slot: Slot, raw: Any, **payload: Any) -> Any:
        """``raw`` as memory keeps it (the transcript projection)."""
        call = self.input.call
        return await project(
            self.transform, "transcript", slot, raw, tool_name=call.tool_name, tool_call_id=call.tool_call_id, **payload
        )

    async def shown_args(self) -> Any:
        args = self.input.call.args
        return await self.shown("input", args, input=args)

    async def answered(
        self, status: str, part: ToolResultPart, kept: ToolResultPart, writes: list[ChunkWrite], **fields: Any
    ) -> ToolCallResult:
        message = Message(role="tool", content=[part]).to_wire()
        memory = Message(role="tool", content=[kept]).to_wire() if kept != part else None
        result = ToolCallResult.model_validate({"status": status, **fields})
        return await self.end(result, writes, [self.transcript_entry(message, memory)])

    async def result(
        self,
        result: Any,
        model_output: Any,
        switch_mode_to: str | None = None,
        before: Sequence[ChunkWrite] = (),
    ) -> ToolCallResult:
        call = self.input.call
        shown = await self.shown("output", result, input=call.args, output=result)
        chunk = self.journal.chunk(
            "tool-result", {**self.base, "args": await self.shown_args(), "result": shown, **self.answer}
        )
        part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=model_output)
        kept = part.model_copy(
            update={"result": await self.kept("output", model_output, input=call.args, output=result)}
        )
        writes = [*before, ChunkWrite(chunk, self.outcome_key("tool-result"))]
        return await self.answered("result", part, kept, writes, switchModeTo=switch_mode_to)

    async def error(self, message: str) -> ToolCallResult:
        call = self.input.call
        shown = await self.shown("error", message, input=call.args, error=message)
        if not isinstance(shown, str):
            shown = str(shown)
        chunk = self.journal.chunk(
            "tool-error", {**self.base, "args": await self.shown_args(), "error": shown, **self.answer}
        )
        part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=message, is_error=True)
        kept = part.model_copy(update={"result": await self.kept("error", message, input=call.args, error=message)})
        return await self.answered("error", part, kept, [ChunkWrite(chunk, self.outcome_key("tool-error"))])

    async def declined(self, reason: str, *, expired: bool) -> ToolCallResult:
        approval: dict[str, Any] = {"id": self.input.call.tool_call_id, "approved": False, "reason": reason}
        if expired:
            approval["expired"] = True
        denied = self.journal.chunk(
            "tool-output-denied", {**self.base, "args": self.input.call.args, "approval": approval, **self.answer}
        )
        return await self.result(reason, reason, before=[ChunkWrite(denied, self.outcome_key("tool-output-denied"))])


async def run_tool_call(registry: Registry, handoff: CallHandoff | None, call_input: ToolCallInput) -> ToolCallResult:
    """Run (or decline, or ask approval for) one tool call and record how it ended.

    A call whose outcome is saved is answered from the store without running again. The call that finds
    every call of its batch ended writes the end of the segment when the workflow asked for it.
    """
    store = registry.store
    call = call_input.call
    saved = None
    starts = 0
    key = keys.tool_call_outcome(call_input.step, call.tool_call_id, call_input.round)
    if is_local():  # the saved outcome of a lost worker's call, else this start counted (local_starts.py)
        saved, starts = await saved_or_counted_start(store, call_input.run_id, key)
    elif may_have_run_before():  # an earlier attempt may have saved how the call ended before its worker was lost
        saved = await store.saved_outcome(call_input.run_id, key)
    limit = (call.activity or TOOL_CALL_DEFAULTS).maximum_attempts
    if saved is not None:
        result = ToolCallResult.model_validate(saved)
    elif starts > limit:
        result = await _Call(registry, call_input).error(local_call_stopped(call.tool_name, limit))
    else:
        if call_input.resolution is not None:  # answered: from now on the call no longer waits
            await store.forget_waiting(call_input.run_id, call.tool_call_id, call_input.round - 1)
        if not call_input.outbox.is_empty():
            await store_outbox_writes(store, call_input.run_id, call_input.outbox)
            transcript = await registry.transcripts.get(call_input.run_id)
            await store.append_chunks(
                call_input.run_id, outbox_writes(call_input.run_id, call_input.outbox, transcript)
            )
        result = await _run(_Call(registry, call_input, attempt=max(starts, attempt())), handoff)
    return await _close_batch_if_last(registry, call_input, result)


def local_call_stopped(tool_name: str, limit: int) -> str:
    """The tool error of a local call whose workers kept dying (an activity's reads the same, with the cause)."""
    return (
        f'Tool "{tool_name}" was stopped: the worker running it was lost {limit} times in a row '
        "(it ran as a local activity and never finished). It may crash its worker; the run goes on without its result."
    )


async def _close_batch_if_last(registry: Registry, call_input: ToolCallInput, result: ToolCallResult) -> ToolCallResult:
    batch = call_input.batch
    if batch is None or result.status == "delegate":  # a call that goes on as a child ends later
        return result
    mine = keys.tool_call_outcome(call_input.step, call_input.call.tool_call_id, call_input.round)
    outcomes = [result]
    for key in batch.outcome_keys:
        if key == mine:
            continue
        saved = await registry.store.saved_outcome(call_input.run_id, key)
        if saved is None:
            return result  # a call of the batch is still running: the last one to end closes
        outcomes.append(ToolCallResult.model_validate(saved))
    waiting = batch.suspended_elsewhere or any(o.status in ("suspended", "resume-rejected") for o in outcomes)
    reason = "suspended" if waiting else batch.reason_if_done
    if reason is None:
        return result
    close = batch.close
    if close.step_finish is not None and waiting:
        close = close.model_copy(update={"step_finish": close.step_finish.model_copy(update={"reason": "suspended"})})
    journal = RunJournal(registry.store, call_input.run_id)
    await close_segment(registry, journal, call_input.options, close, reason, close.usage)
    return result.model_copy(update={"closed_segment": True})


async def _run(run: _Call, handoff: CallHandoff | None) -> ToolCallResult:
    call_input = run.input
    resolution = call_input.resolution
    if resolution is not None and resolution.action == "decline":
        expired = resolution.expired
        reason = APPROVAL_EXPIRED_RESULT if expired else (resolution.reason or DECLINED_RESULT)
        return await run.declined(reason, expired=expired)

    if resolution is not None and resolution.action == "handoff":
        taken_by = resolution.data.get("runId") if isinstance(resolution.data, dict) else None
        return await run.result({"resumedInRunId": taken_by}, {"resumedInRunId": taken_by})

    transcript = await run.registry.transcripts.get(call_input.run_id)
    context = _context(run, call_input, transcript.messages())
    raw_input: Any = call_input.input_snapshot if call_input.input_snapshot is not None else call_input.call.args
    if call_input.options.auto_resume_suspended_tools and resolution is None and is_eligible(run.tool):
        raw_input, suspended_run_id, resume_data = split_resume_fields(raw_input)
        if resume_data is not None:
            _, failure = validate_resume_data(run.tool.id, run.tool.resume_schema, resume_data)
            if failure is not None:
                return await run.result(failure.to_result(), failure.to_result())
            try:
                if handoff is None:
                    raise LookupError("this worker cannot resume calls of other runs (it has no Temporal client)")
                memory = call_input.options.memory
                taken: HandoffAccepted = await handoff.take_over(
                    by_run_id=call_input.run_id,
                    tool_call_id=call_input.call.tool_call_id,
                    tool_name=call_input.call.tool_name,
                    memory=memory,
                    from_run_id=suspended_run_id,
                )
            except LookupError as error:
                return await run.error(str(error))
            raw_input = taken.input_snapshot if taken.input_snapshot is not None else taken.args
            context.resume_data = resume_data
            context.suspend_payload = taken.suspend_payload
            resolution = Resolution(action="resume", data=resume_data)

    if resolution is None and await _needs_approval(run, context):
        args = call_input.call.args
        chunk = run.journal.chunk(
            "tool-call-approval",
            {
                **run.base,
                "args": await run.shown("approval", args, input=args),
                "resumeSchema": schema_string(APPROVAL_RESUME_SCHEMA),
            },
        )
        return await run.end(
            ToolCallResult(
                status="suspended",
                suspension=Suspension(
                    kind="approval",
                    tool_id=run.tool.id,
                    expires_in_seconds=_seconds(run.tool.suspend_expires_in or run.agent.suspend_expires_in),
                ),
            ),
            [ChunkWrite(chunk, run.round_key("tool-call-approval"))],
            [_waiting_marker(run, {"awaitingApproval": True, "runId": call_input.run_id})],
        )

    if resolution is not None and resolution.action == "resume" and context.resume_data is None:
        _, failure = validate_resume_data(run.tool.id, run.tool.resume_schema, resolution.data)
        if failure is not None:
            return await _reject_resume(run, failure.message)
        context.resume_data = resolution.data
    if resolution is not None and resolution.action == "expire":
        context.expired = True
        note = constructors.data_chunk(call_input.run_id, "data-suspension-expired", run.base)
        await run.journal.write([ChunkWrite(note, run.round_key("suspension-expired"))])

    suspender = Suspender(
        run.tool.id, run.tool.suspend_schema, run.tool.suspend_expires_in or run.agent.suspend_expires_in
    )
    context.suspend = suspender
    hooks = merge_hooks(run.agent.hooks, run.registry.run_hooks(call_input.options.hooks))
    metadata = {"agent_id": run.agent.id, "agent_name": run.agent.name}
    try:
        output = await _watch_cancellation(
            run_with_hooks(run.tool, call_input.call.tool_name, raw_input, context, hooks, metadata), context
        )
        if isinstance(output, ChildStart):
            return await _delegated(run, output)
        if suspender.called and suspender.failure is None:
            return await _suspended(run, context, suspender)
        if suspender.called and suspender.failure is not None:
            output = suspender.failure.to_result()
        try:
            result = to_jsonable(output)
        except ValueError as error:
            raise ValueError(
                f'Tool "{call_input.call.tool_name}" returned a value that cannot be stored as JSON: {error}'
            ) from error
        model_output: Any = result
        if run.tool.to_model_output is not None and not is_validation_result(result):
            model_output = to_jsonable(await call_user_function(run.tool.to_model_output, output))
    except Exception as error:
        return await run.error(str(error) or type(error).__name__)
    switch_to = None
    if context.mode_switch is not None:
        switch_to = context.mode_switch.to or run.agent.next_mode(call_input.mode)
        run.agent.mode(switch_to)
    return await run.result(result, model_output, switch_to)


def _context(run: _Call, call_input: ToolCallInput, messages: list[Message]) -> ToolContext:
    options = call_input.options
    call = call_input.call
    return ToolContext(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        agent_id=run.agent.id,
        run_id=call_input.run_id,
        thread_id=options.memory.thread if options.memory else None,
        resource_id=options.memory.resource if options.memory else None,
        request_context=dict(options.request_context),
        writer=JournalToolWriter(run.journal, call_input.step, call_input.round, call.tool_call_id, call.tool_name),
        suspend_payload=call_input.suspend_payload,
        messages=messages,
        mode=call_input.mode,
        attempt=run.attempt,
    )


async def _needs_approval(run: _Call, context: ToolContext) -> bool:
    """Run-level setting or tool-level setting; a predicate that raises means approval is required."""
    call = run.input.call
    policy = run.input.options.require_tool_approval
    try:
        if policy is True:
            return True
        if isinstance(policy, str):
            request = ApprovalRequest(tool_name=call.tool_name, args=call.args, request_context=context.request_context)
            if await call_user_function(run.registry.approval_policy(policy), request):
                return True
        requirement = run.tool.require_approval
        if callable(requirement):
            validated, failure = validate_input(run.tool.id, run.tool.input_schema, call.args)
            return bool(await call_user_function(requirement, call.args if failure else validated, context))
        return bool(requirement)
    except Exception as error:
        activity.logger.warning("approval check for %s raised %r: approval is required", call.tool_name, error)
        return True


async def _suspended(run: _Call, context: ToolContext, suspender: Suspender) -> ToolCallResult:
    call = run.input.call
    try:
        snapshot = to_jsonable(context.accepted_input)
    except ValueError:
        return await run.error("Cannot persist suspended tool input")
    payload = to_jsonable(suspender.payload)
    resume_schema = schema_string(run.tool.resume_schema)
    shown = await run.shown("suspend", payload, input=call.args, suspend_payload=payload)
    chunk = run.journal.chunk(
        "tool-call-suspended",
        {**run.base, "suspendPayload": shown, "args": await run.shown_args(), "resumeSchema": resume_schema},
    )
    return await run.end(
        ToolCallResult(
            status="suspended",
            suspension=Suspension(
                kind="suspension",
                tool_id=run.tool.id,
                suspend_payload=payload,
                resume_schema=resume_schema,
                input_snapshot=snapshot,
                expires_in_seconds=_seconds(suspender.expires_in),
            ),
        ),
        [ChunkWrite(chunk, run.round_key("tool-call-suspended"))],
        [_waiting_marker(run, {"suspended": True, "runId": run.input.run_id, "suspendPayload": payload})],
    )


async def _delegated(run: _Call, start: ChildStart) -> ToolCallResult:
    """The call goes on as a child workflow: the journal links the child's run, so a client can follow it."""
    call = run.input.call
    link = constructors.data_chunk(
        run.input.run_id,
        CHILD_RUN_CHUNK,
        {**run.base, "childRunId": start.child_run_id, "kind": start.kind, "workflow": start.workflow},
    )
    await run.journal.write([ChunkWrite(link, keys.child_run(run.input.step, call.tool_call_id))])
    return ToolCallResult(status="delegate", child=start)


async def _reject_resume(run: _Call, message: str) -> ToolCallResult:
    """Resume data the tool's schema refused: the call waits again; the journal says why."""
    call = run.input.call
    chunk = constructors.resume_rejected(
        run.input.run_id, "AGENT_RESUME_INVALID_DATA", message, call.tool_call_id, toolName=call.tool_name
    )
    return await run.end(
        ToolCallResult(status="resume-rejected", message=message), [ChunkWrite(chunk, run.round_key("resume-rejected"))]
    )


def _waiting_marker(run: _Call, marker: dict[str, Any]) -> TranscriptEntry:
    """Until it is answered, the call's place in the transcript says it waits (and in which run)."""
    call = run.input.call
    part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=marker)
    return run.transcript_entry(Message(role="tool", content=[part]).to_wire())


def _seconds(duration: Any) -> float | None:
    return None if duration is None else float(duration.total_seconds())


async def _watch_cancellation(work: Any, context: ToolContext) -> Any:
    """Await the tool while setting ``context.cancelled`` as soon as the activity is cancelled."""
    if not activity.in_activity():
        return await work

    async def watch() -> None:
        await activity.wait_for_cancelled()
        context.cancelled.set()

    watcher = asyncio.create_task(watch())
    try:
        return await work
    finally:
        watcher.cancel()
