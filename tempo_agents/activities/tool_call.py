"""The tool-call activity: one call of a tool, run in stages; how it ended goes to its ``CallRecord``.

A call that runs goes through its stages in order, and any of them may end it: *decide* (a person's answer
that ends it without running: declined, taken over by a later run; an auto-resume's take-over of an earlier
run's call), *approve* (ask a person first), *validate* (resume data against the tool's schema), *execute*
(hooks, the tool, ``to_model_output``). Every way it ends is recorded by :class:`CallRecord`
(``call_record.py``), in one store transaction with the call's saved outcome, so a retry after a lost worker
answers from the store (ARCHITECTURE.md, "Crash safety").
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from temporalio import activity

from tempo_agents.activities._running import attempt, is_local, may_have_run_before, saved_or_counted_start
from tempo_agents.activities.approved_args import record_changed_args
from tempo_agents.activities.call_record import CallRecord, close_batch_if_last, saved_outcome_key
from tempo_agents.activities.handoff import CallHandoff
from tempo_agents.activities.kept_answer import end_answered_wait
from tempo_agents.activities.run_events import notify_call
from tempo_agents.activity_options import TOOL_CALL_DEFAULTS
from tempo_agents.agent.auto_resume import is_eligible, split_resume_fields
from tempo_agents.agent.hooks import merge_hooks, run_with_hooks
from tempo_agents.approvals import ApprovalRequest
from tempo_agents.forks import TOOL_REUSED_CHUNK, reusable_outcome
from tempo_agents.journal import constructors
from tempo_agents.journal.outbox_flush import write_outbox
from tempo_agents.journal.writer import JournalToolWriter
from tempo_agents.models.messages import Message
from tempo_agents.store.base import ChunkWrite
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.suspension import APPROVAL_EXPIRED_RESULT, DECLINED_RESULT, Suspender, schema_string
from tempo_agents.tools.user_code import call_user_function
from tempo_agents.tools.validation import is_validation_result, validate_input, validate_resume_data
from tempo_agents.workflows.child_payloads import ChildStart
from tempo_agents.workflows.payloads import HandoffAccepted, Resolution, Suspension, ToolCallInput, ToolCallResult

__all__ = ["run_tool_call", "to_jsonable"]

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry

to_jsonable = constructors.to_jsonable


async def run_tool_call(registry: Registry, handoff: CallHandoff | None, call_input: ToolCallInput) -> ToolCallResult:
    """Run (or decline, or ask approval for) one tool call and record how it ended.

    A call whose outcome is saved is answered from the store without running again. The call that finds
    every call of its batch ended writes the end of the segment when the workflow asked for it.
    """
    store = registry.store
    call = call_input.call
    saved = None
    starts = 0
    key = saved_outcome_key(call_input)
    if is_local():  # the saved outcome of a lost worker's call, else this start counted (_running.py)
        saved, starts = await saved_or_counted_start(store, call_input.run_id, key)
    elif may_have_run_before():  # an earlier attempt may have saved how the call ended before its worker was lost
        saved = await store.saved_outcome(call_input.run_id, key)
    limit = (call.activity or TOOL_CALL_DEFAULTS).maximum_attempts
    if saved is not None:
        result = ToolCallResult.model_validate(saved)
    elif starts > limit:
        stopped = constructors.tool_stopped_message(call.tool_name, limit, constructors.LOST_AS_LOCAL_ACTIVITY)
        result = await CallRecord(registry, call_input).error(stopped)
    else:
        await end_answered_wait(store, call_input)  # answered: from now on the call no longer waits
        await write_outbox(store, registry.transcripts, call_input.run_id, call_input.outbox)
        result = await _run(CallRecord(registry, call_input, attempt=max(starts, attempt())), handoff)
    result = await close_batch_if_last(registry, call_input, result)
    await notify_call(registry, call_input, result)  # after the record, and again on a retry that reads it
    return result


async def _run(record: CallRecord, handoff: CallHandoff | None) -> ToolCallResult:
    """The stages of the call in order: each one ends the call (and returns how) or lets it go on."""
    decided = await _decide(record)
    if decided is not None:
        return decided
    await record_changed_args(record)
    reused = await _reuse(record)
    if reused is not None:
        return reused
    transcript = await record.registry.transcripts.get(record.input.run_id)
    stages = _CallStages(record, handoff, _context(record, transcript.messages()))
    for stage in (stages.take_over, stages.approve, stages.validate):
        ended = await stage()
        if ended is not None:
            return ended
    return await stages.execute()


async def _decide(record: CallRecord) -> ToolCallResult | None:
    """A person's answer that ends the call without running it: declined (or its approval expired), or taken
    over by a later run of the thread."""
    resolution = record.input.resolution
    if resolution is not None and resolution.action == "decline":
        expired = resolution.expired
        reason = APPROVAL_EXPIRED_RESULT if expired else (resolution.reason or DECLINED_RESULT)
        return await record.declined(reason, expired=expired)
    if resolution is not None and resolution.action == "handoff":
        taken_by = resolution.data.get("runId") if isinstance(resolution.data, dict) else None
        return await record.result({"resumedInRunId": taken_by}, {"resumedInRunId": taken_by})
    return None


async def _reuse(record: CallRecord) -> ToolCallResult | None:
    """A fork's call answered from its origin's outcome (``reuse="tools"``, same tool, exactly the same arguments):
    the tool never runs; ``data-tool-reused`` says where the outcome came from."""
    call_input = record.input
    fork = call_input.options.fork
    if fork is None or call_input.resolution is not None or call_input.round > 0:
        return None
    call = call_input.call
    reused = await reusable_outcome(record.registry.store, fork, call.tool_name, call.args)
    if reused is None:
        return None
    note = constructors.data_chunk(
        call_input.run_id,
        TOOL_REUSED_CHUNK,
        {**record.base, "fromRunId": fork.run_id, "fromToolCallId": reused.tool_call_id, "fromStep": reused.step},
    )
    before = [ChunkWrite(note, record.round_key("tool-reused"))]
    if reused.is_error:
        return await record.error(str(reused.result), before=before)
    return await record.result(reused.result, reused.result, before=before)


class _CallStages:
    """The stages of a call that runs: what each stage learns (the input, the resume data) the next one uses."""

    def __init__(self, record: CallRecord, handoff: CallHandoff | None, context: ToolContext) -> None:
        self.record = record
        self.handoff = handoff
        self.context = context
        self.resolution = record.input.resolution
        snapshot = record.input.input_snapshot
        self.raw_input: Any = snapshot if snapshot is not None else record.input.call.args

    async def take_over(self) -> ToolCallResult | None:
        """Auto-resume: an input that carries resume data takes over the suspended call of an earlier run."""
        record = self.record
        call_input = record.input
        if not (
            call_input.options.auto_resume_suspended_tools and self.resolution is None and is_eligible(record.tool)
        ):
            return None
        self.raw_input, suspended_run_id, resume_data = split_resume_fields(self.raw_input)
        if resume_data is None:
            return None
        _, failure = validate_resume_data(record.tool.id, record.tool.resume_schema, resume_data)
        if failure is not None:
            return await record.result(failure.to_result(), failure.to_result())
        try:
            if self.handoff is None:
                raise LookupError("this worker cannot resume calls of other runs (it has no Temporal client)")
            taken: HandoffAccepted = await self.handoff.take_over(
                by_run_id=call_input.run_id,
                tool_call_id=call_input.call.tool_call_id,
                tool_name=call_input.call.tool_name,
                memory=call_input.options.memory,
                from_run_id=suspended_run_id,
            )
        except LookupError as error:
            return await record.error(str(error))
        self.raw_input = taken.input_snapshot if taken.input_snapshot is not None else taken.args
        self.context.resume_data = resume_data
        self.context.suspend_payload = taken.suspend_payload
        self.resolution = Resolution(action="resume", data=resume_data)
        return None

    async def approve(self) -> ToolCallResult | None:
        """Ask a person first when the run or the tool requires approval (an answered call is past asking)."""
        record = self.record
        if self.resolution is not None or not await _needs_approval(record, self.context):
            return None
        shown = await record.shown_args(approval=True)
        expires = record.tool.suspend_expires_in or record.agent.suspend_expires_in
        suspension = Suspension(
            kind="approval",
            tool_id=record.tool.id,
            expires_in_seconds=_seconds(expires),
            approvers=await _approvers(record, self.context),
            args_schema=schema_string(record.tool.input_schema) or "{}",  # "{}": any arguments may be approved
            **_alarms(record),
        )
        return await record.suspended(suspension, args=shown)

    async def validate(self) -> ToolCallResult | None:
        """A person's resume data against the tool's resume schema (refused, the call waits again); an expired
        suspension is noted in the journal and the call runs with ``ctx.expired``."""
        record = self.record
        resolution = self.resolution
        if resolution is not None and resolution.action == "resume" and self.context.resume_data is None:
            _, failure = validate_resume_data(record.tool.id, record.tool.resume_schema, resolution.data)
            if failure is not None:
                return await record.resume_rejected(failure.message, await _approvers(record, self.context))
            self.context.resume_data = resolution.data
        if resolution is not None and resolution.action == "expire":
            self.context.expired = True
            note = constructors.data_chunk(record.input.run_id, "data-suspension-expired", record.base)
            await record.journal.write([ChunkWrite(note, record.round_key("suspension-expired"))])
        return None

    async def execute(self) -> ToolCallResult:
        """Run the tool under the hooks and record how it ended; what it raises is its tool error."""
        record = self.record
        agent = record.agent
        suspender = Suspender(
            record.tool.id, record.tool.suspend_schema, record.tool.suspend_expires_in or agent.suspend_expires_in
        )
        self.context.suspend = suspender
        hooks = merge_hooks(agent.hooks, record.registry.run_hooks(record.input.options.hooks))
        metadata = {"agent_id": agent.id, "agent_name": agent.name}
        tool_name = record.input.call.tool_name
        try:
            output = await _watch_cancellation(
                run_with_hooks(record.tool, tool_name, self.raw_input, self.context, hooks, metadata), self.context
            )
            if isinstance(output, ChildStart):
                return await record.delegated(output)
            if suspender.called and suspender.failure is None:
                return await self._suspended(suspender)
            result, model_output = await self._outputs(output, suspender)
        except Exception as error:
            return await record.error(str(error) or type(error).__name__)
        return await record.result(result, model_output, self._switched_mode())

    async def _outputs(self, output: Any, suspender: Suspender) -> tuple[Any, Any]:
        """The call's result as stored, and as the model reads it (``to_model_output``)."""
        tool = self.record.tool
        tool_name = self.record.input.call.tool_name
        if suspender.called and suspender.failure is not None:
            output = suspender.failure.to_result()
        try:
            result = to_jsonable(output)
        except ValueError as error:
            raise ValueError(f'Tool "{tool_name}" returned a value that cannot be stored as JSON: {error}') from error
        model_output: Any = result
        if tool.to_model_output is not None and not is_validation_result(result):
            model_output = to_jsonable(await call_user_function(tool.to_model_output, output))
        return result, model_output

    async def _suspended(self, suspender: Suspender) -> ToolCallResult:
        """The tool called ``ctx.suspend``: the call waits, with the input it accepted and its payload."""
        record = self.record
        args = record.input.call.args
        try:
            snapshot = to_jsonable(self.context.accepted_input)
        except ValueError:
            return await record.error("Cannot persist suspended tool input")
        payload = to_jsonable(suspender.payload)
        shown = await record.shown("suspend", payload, input=args, suspend_payload=payload)
        suspension = Suspension(
            kind="suspension",
            tool_id=record.tool.id,
            suspend_payload=payload,
            resume_schema=schema_string(record.tool.resume_schema),
            input_snapshot=snapshot,
            expires_in_seconds=_seconds(suspender.expires_in),
            **_alarms(record),
            approvers=await _approvers(record, self.context),
        )
        return await record.suspended(suspension, args=await record.shown_args(), shown_payload=shown)

    def _switched_mode(self) -> str | None:
        """The mode the tool switched the run to (``ctx.switch_mode``), checked against the agent's modes."""
        mode_switch = self.context.mode_switch
        if mode_switch is None:
            return None
        agent = self.record.agent
        switch_to = mode_switch.to or agent.next_mode(self.record.input.mode)
        agent.mode(switch_to)
        return switch_to


def _context(record: CallRecord, messages: list[Message]) -> ToolContext:
    call_input = record.input
    options = call_input.options
    call = call_input.call
    return ToolContext(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        agent_id=record.agent.id,
        run_id=call_input.run_id,
        thread_id=options.memory.thread if options.memory else None,
        resource_id=options.memory.resource if options.memory else None,
        request_context=dict(options.request_context),
        writer=JournalToolWriter(
            record.journal, call_input.step, call_input.round, call.tool_call_id, call.tool_name, call_input.refusals
        ),
        suspend_payload=call_input.suspend_payload,
        messages=messages,
        mode=call_input.mode,
        attempt=record.attempt,
    )


async def _needs_approval(record: CallRecord, context: ToolContext) -> bool:
    """Run-level setting or tool-level setting; a predicate that raises means approval is required."""
    call = record.input.call
    policy = record.input.options.require_tool_approval
    try:
        if policy is True:
            return True
        if isinstance(policy, str):
            request = ApprovalRequest(tool_name=call.tool_name, args=call.args, request_context=context.request_context)
            if await call_user_function(record.registry.approval_policy(policy), request):
                return True
        requirement = record.tool.require_approval
        if callable(requirement):
            validated, failure = validate_input(record.tool.id, record.tool.input_schema, call.args)
            return bool(await call_user_function(requirement, call.args if failure else validated, context))
        return bool(requirement)
    except Exception as error:
        activity.logger.warning("approval check for %s raised %r: approval is required", call.tool_name, error)
        return True


async def _approvers(record: CallRecord, context: ToolContext) -> list[str]:
    """Who may answer the call: the tool's ``approvers=``, else the agent's, a registered policy's when one names
    it (user code: it runs here, in the activity, and the workflow keeps what it returned)."""
    chosen = record.tool.approvers if record.tool.approvers is not None else record.agent.approvers
    if not isinstance(chosen, str):
        return list(chosen or [])
    call = record.input.call
    request = ApprovalRequest(tool_name=call.tool_name, args=call.args, request_context=context.request_context)
    named = await call_user_function(record.registry.approver_policy(chosen), request)
    if isinstance(named, str) or not all(isinstance(name, str) and name for name in named):
        raise TypeError(f'approver policy "{chosen}" must return a list of principals, got {named!r}')
    return list(named)


def _seconds(duration: Any) -> float | None:
    return None if duration is None else float(duration.total_seconds())


def _alarms(record: CallRecord) -> dict[str, Any]:
    """The reminders and escalation of the call's wait (workflow timers): the tool's, else the run options', else
    its agent's."""
    tool, agent, options = record.tool, record.agent, record.input.options
    remind = _seconds(tool.remind_every) or options.remind_every_seconds or _seconds(agent.remind_every)
    escalate_after: float | None
    if tool.escalate_after is not None:
        escalate_after, escalate_to = _seconds(tool.escalate_after), tool.escalate_to
    elif options.escalate_after_seconds is not None:
        escalate_after, escalate_to = options.escalate_after_seconds, options.escalate_to or []
    else:
        escalate_after, escalate_to = _seconds(agent.escalate_after), agent.escalate_to
    fields: dict[str, Any] = {}
    if remind is not None:
        fields["remind_every_seconds"] = remind
    if escalate_after is not None and escalate_to:
        fields["escalate_after_seconds"] = escalate_after
        fields["escalate_to"] = list(escalate_to)
    return fields


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
