"""The tool-call activity: approval, hooks, validation, execute, suspension and ``to_model_output``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from temporalio import activity
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from tempo_agents.activities._journal import JournalToolWriter, RunJournal, to_jsonable
from tempo_agents.agent.approval import ApprovalRequest
from tempo_agents.agent.auto_resume import is_eligible, split_resume_fields
from tempo_agents.agent.hooks import merge_hooks, run_with_hooks
from tempo_agents.models.messages import Message, ToolResultPart
from tempo_agents.store.base import ChunkWrite, TranscriptEntry
from tempo_agents.tools._validation import is_validation_result, validate_input, validate_resume_data
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.suspension import (
    APPROVAL_EXPIRED_RESULT,
    APPROVAL_RESUME_SCHEMA,
    DECLINED_RESULT,
    Suspender,
    schema_string,
)
from tempo_agents.tools.tool import Tool, call_user_function
from tempo_agents.tools.transform import Slot, project
from tempo_agents.workflows.payloads import (
    HandoffAccepted,
    HandoffRequest,
    Resolution,
    Suspension,
    ToolCallInput,
    ToolCallResult,
)

if TYPE_CHECKING:
    from tempo_agents.agent.agent import Agent
    from tempo_agents.agent.app import App


class _Call:
    """One execution of a tool call: where its chunks and transcript entry go."""

    def __init__(self, app: App, call_input: ToolCallInput) -> None:
        self.app = app
        self.input = call_input
        self.agent: Agent = app.agent(call_input.agent_id)
        self.tool: Tool = self.agent.tools[call_input.call.tool_name]
        self.journal = RunJournal(app.store, call_input.run_id)
        call = call_input.call
        self.base = {"toolCallId": call.tool_call_id, "toolName": call.tool_name}
        self.key = f"{call_input.step}:{call.tool_call_id}"
        self.round_key = f"{self.key}:r{call_input.round}"
        self.transcript: list[TranscriptEntry] = []
        self.transform = self.agent.transform_for(call.tool_name)

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

    async def finish(self, part: ToolResultPart, write: ChunkWrite, kept: ToolResultPart | None = None) -> None:
        index = self.input.call.index
        message = Message(role="tool", content=[part]).to_wire()
        memory = Message(role="tool", content=[kept]).to_wire() if kept is not None and kept != part else None
        entry = TranscriptEntry(self.input.step, f"tool-{index:04d}", 1 + index, message, memory)
        await self.app.store.record(self.input.run_id, [entry], [write])

    async def result(self, result: Any, model_output: Any, switch_mode_to: str | None = None) -> ToolCallResult:
        call = self.input.call
        shown = await self.shown("output", result, input=call.args, output=result)
        chunk = self.journal.chunk("tool-result", {**self.base, "args": await self.shown_args(), "result": shown})
        part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=model_output)
        kept = part.model_copy(
            update={"result": await self.kept("output", model_output, input=call.args, output=result)}
        )
        await self.finish(part, ChunkWrite(chunk, f"{self.key}:tool-result"), kept)
        return ToolCallResult(status="result", switch_mode_to=switch_mode_to)

    async def error(self, message: str) -> ToolCallResult:
        call = self.input.call
        shown = await self.shown("error", message, input=call.args, error=message)
        if not isinstance(shown, str):
            shown = str(shown)
        chunk = self.journal.chunk("tool-error", {**self.base, "args": await self.shown_args(), "error": shown})
        part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=message, is_error=True)
        kept = part.model_copy(update={"result": await self.kept("error", message, input=call.args, error=message)})
        await self.finish(part, ChunkWrite(chunk, f"{self.key}:tool-error"), kept)
        return ToolCallResult(status="error")

    async def declined(self, reason: str, *, expired: bool) -> ToolCallResult:
        approval: dict[str, Any] = {"id": self.input.call.tool_call_id, "approved": False, "reason": reason}
        if expired:
            approval["expired"] = True
        denied = self.journal.chunk(
            "tool-output-denied", {**self.base, "args": self.input.call.args, "approval": approval}
        )
        await self.journal.write([ChunkWrite(denied, f"{self.key}:tool-output-denied")])
        return await self.result(reason, reason)


async def run_tool_call(app: App, call_input: ToolCallInput) -> ToolCallResult:
    """Run (or decline, or ask approval for) one tool call and record how it ended."""
    run = _Call(app, call_input)
    run.transcript = await app.store.get_transcript(call_input.run_id)
    resolution = call_input.resolution
    if resolution is not None and resolution.action == "decline":
        expired = resolution.expired
        reason = APPROVAL_EXPIRED_RESULT if expired else (resolution.reason or DECLINED_RESULT)
        return await run.declined(reason, expired=expired)

    if resolution is not None and resolution.action == "handoff":
        taken_by = resolution.data.get("runId") if isinstance(resolution.data, dict) else None
        return await run.result({"resumedInRunId": taken_by}, {"resumedInRunId": taken_by})

    context = _context(run, call_input)
    raw_input: Any = call_input.input_snapshot if call_input.input_snapshot is not None else call_input.call.args
    if call_input.options.auto_resume_suspended_tools and resolution is None and is_eligible(run.tool):
        raw_input, suspended_run_id, resume_data = split_resume_fields(raw_input)
        if resume_data is not None:
            _, failure = validate_resume_data(run.tool.id, run.tool.resume_schema, resume_data)
            if failure is not None:
                return await run.result(failure.to_result(), failure.to_result())
            try:
                taken = await _take_over(run, suspended_run_id)
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
        await run.journal.write([ChunkWrite(chunk, f"{run.round_key}:tool-call-approval")])
        await _mark_waiting(run, {"awaitingApproval": True, "runId": call_input.run_id})
        return ToolCallResult(
            status="suspended",
            suspension=Suspension(
                kind="approval",
                expires_in_seconds=_seconds(run.tool.suspend_expires_in or run.agent.suspend_expires_in),
            ),
        )

    if resolution is not None and resolution.action == "resume" and context.resume_data is None:
        _, failure = validate_resume_data(run.tool.id, run.tool.resume_schema, resolution.data)
        if failure is not None:
            return await _reject_resume(run, failure.message)
        context.resume_data = resolution.data
    if resolution is not None and resolution.action == "expire":
        context.expired = True
        note = {"type": "data-suspension-expired", "runId": call_input.run_id, "from": "SYSTEM", "data": run.base}
        await run.journal.write([ChunkWrite(note, f"{run.round_key}:suspension-expired")])

    suspender = Suspender(
        run.tool.id, run.tool.suspend_schema, run.tool.suspend_expires_in or run.agent.suspend_expires_in
    )
    context.suspend = suspender
    hooks = merge_hooks(run.agent.hooks, app.run_hooks(call_input.options.hooks))
    metadata = {"agent_id": run.agent.id, "agent_name": run.agent.name}
    try:
        output = await _watch_cancellation(
            run_with_hooks(run.tool, call_input.call.tool_name, raw_input, context, hooks, metadata), context
        )
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


def _context(run: _Call, call_input: ToolCallInput) -> ToolContext:
    options = call_input.options
    return ToolContext(
        tool_call_id=call_input.call.tool_call_id,
        tool_name=call_input.call.tool_name,
        agent_id=run.agent.id,
        run_id=call_input.run_id,
        thread_id=options.memory.thread if options.memory else None,
        resource_id=options.memory.resource if options.memory else None,
        request_context=dict(options.request_context),
        writer=JournalToolWriter(run.journal, run.round_key, call_input.call.tool_call_id, call_input.call.tool_name),
        suspend_payload=call_input.suspend_payload,
        messages=[Message.model_validate(entry.message) for entry in run.transcript],
        mode=call_input.mode,
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
            if await call_user_function(run.app.approval_policy(policy), request):
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
    await run.journal.write([ChunkWrite(chunk, f"{run.round_key}:tool-call-suspended")])
    await _mark_waiting(run, {"suspended": True, "runId": run.input.run_id, "suspendPayload": payload})
    return ToolCallResult(
        status="suspended",
        suspension=Suspension(
            kind="suspension",
            suspend_payload=payload,
            resume_schema=resume_schema,
            input_snapshot=snapshot,
            expires_in_seconds=_seconds(suspender.expires_in),
        ),
    )


async def _reject_resume(run: _Call, message: str) -> ToolCallResult:
    chunk = {
        "type": "data-error",
        "runId": run.input.run_id,
        "from": "SYSTEM",
        "data": {"kind": "resume-rejected", "code": "AGENT_RESUME_INVALID_DATA", "message": message, **run.base},
    }
    attempt_key = activity.info().activity_id if activity.in_activity() else "direct"
    await run.journal.write([ChunkWrite(chunk, f"{run.round_key}:resume-rejected:{attempt_key}")])
    return ToolCallResult(status="resume-rejected", message=message)


async def _mark_waiting(run: _Call, marker: dict[str, Any]) -> None:
    """Until it is answered, the call's place in the transcript says it waits (and in which run)."""
    call = run.input.call
    index = call.index
    part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=marker)
    message = Message(role="tool", content=[part]).to_wire()
    await run.app.store.put_transcript(
        run.input.run_id, [TranscriptEntry(run.input.step, f"tool-{index:04d}", 1 + index, message)]
    )


async def _take_over(run: _Call, suspended_run_id: str | None) -> HandoffAccepted:
    """Auto-resume: take a suspended call of this tool over from an earlier run of the same thread."""
    options = run.input.options
    tool_name = run.input.call.tool_name
    candidates = [suspended_run_id] if suspended_run_id else []
    if not candidates and options.memory is not None:
        listed = await run.app.list_suspended_runs(thread_id=options.memory.thread, resource_id=options.memory.resource)
        candidates = [r.run_id for r in listed.runs if any(c.tool_name == tool_name for c in r.tool_calls)]
    for candidate in candidates:
        if candidate == run.input.run_id:
            continue
        try:
            accepted: HandoffAccepted = await run.app.client.get_workflow_handle(candidate).execute_update(
                "handoff",
                HandoffRequest(tool_name=tool_name, by_run_id=run.input.run_id),
                id=f"handoff:{run.input.run_id}:{run.input.call.tool_call_id}",
                result_type=HandoffAccepted,
            )
        except (WorkflowUpdateFailedError, RPCError):
            continue
        return accepted

    raise LookupError(f'No suspended call of tool "{tool_name}" was found on this thread to resume.')


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
