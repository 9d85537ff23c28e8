"""How a tool call ended, recorded: the one owner of the chunks, transcript entries and saved outcome of a call.

The tool-call activity and the child-relay activity (a call that ran as a child workflow) both end calls here.
However a call ends (result, error, suspension, approval request, declined, refused resume data), its chunk,
its place in the transcript and its saved outcome are written in one store transaction, so a retry after a
lost worker answers from the store and a tool whose result is saved never runs again (ARCHITECTURE.md,
"Crash safety"). The call that finds every call of its batch ended writes the end of the segment
(:func:`close_batch_if_last`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from temporalio import activity

from tempo_agents.activities.segment_close import close_segment
from tempo_agents.activities.waiting_transcript import waiting_note
from tempo_agents.journal import constructors, keys
from tempo_agents.journal.writer import RunJournal
from tempo_agents.metrics import SUSPENDED_AT_FIELD
from tempo_agents.models.messages import Message, ToolResultPart
from tempo_agents.store.base import ChunkWrite, SavedOutcome, TranscriptEntry, WaitingCall, WaitingChange
from tempo_agents.tools.displayed_call import displayed_call
from tempo_agents.tools.suspension import APPROVAL_RESUME_SCHEMA, schema_string
from tempo_agents.tools.transform import Slot, project
from tempo_agents.workflows.child_payloads import CHILD_RUN_CHUNK, ChildStart
from tempo_agents.workflows.payloads import PendingCall, Suspension, ToolCallInput, ToolCallResult
from tempo_agents.workflows.resume_errors import INVALID_RESUME_DATA

__all__ = ["CallRecord", "close_batch_if_last", "saved_outcome_key"]

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry
    from tempo_agents.agent.agent import Agent
    from tempo_agents.tools.tool import Tool


def saved_outcome_key(call_input: ToolCallInput) -> str:
    """Where this round of the call keeps its saved outcome."""
    return keys.tool_call_outcome(call_input.step, call_input.call.tool_call_id, call_input.round, call_input.refusals)


class CallRecord:
    """One execution of a tool call: where its chunks and transcript entry go, and how it ends."""

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
        """The fields every chunk of the call starts with."""
        resolution = call_input.resolution
        answered_by = resolution.answered_by if resolution is not None else None
        self._answer: dict[str, Any] = {"answeredBy": answered_by} if answered_by is not None else {}
        """Added to the chunk that ends an answered call: who answered it."""
        self._transform = self.agent.transform_for(call.tool_name)
        self._approvers_again: list[str] = []
        """Who may answer a call whose tool refused its answer, as it waits again (the store's view of it)."""

    def _outcome_key(self, chunk_type: str) -> str:
        return keys.call_outcome(self.input.step, self.input.call.tool_call_id, chunk_type)

    def round_key(self, what: str) -> str:
        return keys.call_round(
            self.input.step, self.input.call.tool_call_id, self.input.round, what, self.input.refusals
        )

    async def shown(self, slot: Slot, raw: Any, **payload: Any) -> Any:
        """``raw`` as clients may see it (the display projection)."""
        call = self.input.call
        return await project(
            self._transform, "display", slot, raw, tool_name=call.tool_name, tool_call_id=call.tool_call_id, **payload
        )

    async def _kept(self, slot: Slot, raw: Any, **payload: Any) -> Any:
        """``raw`` as memory keeps it (the transcript projection)."""
        call = self.input.call
        return await project(
            self._transform,
            "transcript",
            slot,
            raw,
            tool_name=call.tool_name,
            tool_call_id=call.tool_call_id,
            **payload,
        )

    async def shown_args(self, *, approval: bool = False) -> Any:
        """The call's arguments as clients may see them (``approval``: in its approval, or its decline)."""
        call = self.input.call
        shown = await displayed_call(
            self._transform, tool_name=call.tool_name, tool_call_id=call.tool_call_id, args=call.args, approval=approval
        )
        return shown.args

    async def result(
        self,
        result: Any,
        model_output: Any,
        switch_mode_to: str | None = None,
        before: Sequence[ChunkWrite] = (),
    ) -> ToolCallResult:
        """The call ended with ``result`` (the model reads ``model_output``); ``before``: chunks written first."""
        call = self.input.call
        shown = await self.shown("output", result, input=call.args, output=result)
        chunk = self.journal.chunk(
            "tool-result", {**self.base, "args": await self.shown_args(), "result": shown, **self._answer}
        )
        part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=model_output)
        kept = part.model_copy(
            update={"result": await self._kept("output", model_output, input=call.args, output=result)}
        )
        writes = [*before, ChunkWrite(chunk, self._outcome_key("tool-result"))]
        return await self._answered("result", part, kept, writes, switchModeTo=switch_mode_to)

    async def error(self, message: str, before: Sequence[ChunkWrite] = ()) -> ToolCallResult:
        """The call ended with a tool error the model reads; ``before``: chunks written first."""
        call = self.input.call
        shown = await self.shown("error", message, input=call.args, error=message)
        if not isinstance(shown, str):
            shown = str(shown)
        chunk = self.journal.chunk(
            "tool-error", {**self.base, "args": await self.shown_args(), "error": shown, **self._answer}
        )
        part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=message, is_error=True)
        kept = part.model_copy(update={"result": await self._kept("error", message, input=call.args, error=message)})
        writes = [*before, ChunkWrite(chunk, self._outcome_key("tool-error"))]
        return await self._answered("error", part, kept, writes)

    async def declined(self, reason: str, *, expired: bool) -> ToolCallResult:
        """A person declined the call (or its approval expired): ``reason`` is its result."""
        approval: dict[str, Any] = {"id": self.input.call.tool_call_id, "approved": False, "reason": reason}
        if expired:
            approval["expired"] = True
        denied = self.journal.chunk(
            "tool-output-denied",
            {**self.base, "args": await self.shown_args(approval=True), "approval": approval, **self._answer},
        )
        return await self.result(reason, reason, before=[ChunkWrite(denied, self._outcome_key("tool-output-denied"))])

    async def suspended(
        self,
        suspension: Suspension,
        *,
        args: Any,
        shown_payload: Any = None,
        link: Mapping[str, Any] | None = None,
    ) -> ToolCallResult:
        """The call waits for a person: its ``tool-call-suspended`` (or ``tool-call-approval``) chunk, its saved
        outcome and the marker that holds its place in the transcript until it is answered.

        ``args`` and ``shown_payload``: the call's arguments and its suspend payload as clients may see them;
        ``link``: the child run and call the call waits for, when it waits for a child's.
        """
        run_id = self.input.run_id
        marker: dict[str, Any]
        if suspension.kind == "approval":
            chunk_type = "tool-call-approval"
            payload = {**self.base, "args": args, "resumeSchema": schema_string(APPROVAL_RESUME_SCHEMA)}
            marker = {"awaitingApproval": True, "runId": run_id}
        else:
            chunk_type = "tool-call-suspended"
            resume_schema = suspension.resume_schema
            payload = {**self.base, "suspendPayload": shown_payload, "args": args, "resumeSchema": resume_schema}
            marker = {"suspended": True, "runId": run_id, "suspendPayload": suspension.suspend_payload}
        marker |= waiting_note(suspension.kind, suspension.approvers, datetime.now(UTC))
        if suspension.approvers:
            payload["approvers"] = list(suspension.approvers)
        chunk = self.journal.chunk(chunk_type, {**payload, **(link or {})})
        call = self.input.call
        part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=marker)
        return await self._end(
            ToolCallResult(status="suspended", suspension=suspension),
            [ChunkWrite(chunk, self.round_key(chunk_type))],
            [self._transcript_entry(Message(role="tool", content=[part]).to_wire())],
        )

    async def resume_rejected(self, message: str, approvers: Sequence[str] = ()) -> ToolCallResult:
        """Resume data the tool's schema refused: the call waits again (for ``approvers``); the journal says why."""
        self._approvers_again = list(approvers)
        call = self.input.call
        chunk = constructors.resume_rejected(
            self.input.run_id, INVALID_RESUME_DATA, message, call.tool_call_id, toolName=call.tool_name
        )
        return await self._end(
            ToolCallResult(status="resume-rejected", message=message),
            [ChunkWrite(chunk, self.round_key("resume-rejected"))],
        )

    async def delegated(self, start: ChildStart) -> ToolCallResult:
        """The call goes on as a child workflow: the journal links the child's run, so a client can follow it.
        Nothing is saved: the call has not ended (the child relay records how it ends)."""
        link = constructors.data_chunk(
            self.input.run_id,
            CHILD_RUN_CHUNK,
            {**self.base, "childRunId": start.child_run_id, "kind": start.kind, "workflow": start.workflow},
        )
        await self.journal.write([ChunkWrite(link, keys.child_run(self.input.step, self.input.call.tool_call_id))])
        return ToolCallResult(status="delegate", child=start)

    async def _end(
        self, result: ToolCallResult, writes: Sequence[ChunkWrite], entries: Sequence[TranscriptEntry] = ()
    ) -> ToolCallResult:
        """Record how the call ended, its chunks and its saved outcome, in one transaction."""
        await self.journal.flush_text()
        saved = result.model_dump(mode="json", by_alias=True)
        if result.status == "suspended":  # for the time-waiting metric, read when the call is resumed
            saved[SUSPENDED_AT_FIELD] = time.time()
        outcome = SavedOutcome(saved_outcome_key(self.input), saved)
        await self.registry.store.record(
            self.input.run_id, entries, writes, outcome, waiting=self._waiting_change(result)
        )
        return result

    def _waiting_change(self, result: ToolCallResult) -> WaitingChange | None:
        """The call waits (it suspended, or its resume data was refused and it waits again), or no longer does
        (an answered call ended); ``None`` for a call that never waited."""
        if result.status == "suspended" and result.suspension is not None:
            return WaitingChange(waits=[self._waiting_call(result.suspension, self.input.round)])
        if result.status == "resume-rejected":
            again = Suspension(
                kind="suspension",
                tool_id=self.tool.id,
                suspend_payload=self.input.suspend_payload,
                resume_schema=schema_string(self.tool.resume_schema),
                input_snapshot=self.input.input_snapshot,
                approvers=self._approvers_again,
            )
            return WaitingChange(waits=[self._waiting_call(again, max(self.input.round - 1, 0))])
        if self.input.resolution is not None:
            return WaitingChange(answered=[self.input.call.tool_call_id])
        return None

    def _waiting_call(self, suspension: Suspension, call_round: int) -> WaitingCall:
        """The call as the store lists it while it waits (the ``pending`` query's view of it)."""
        call = self.input.call
        now = datetime.now(UTC)
        pending = PendingCall.of(self.input, suspension, now, call_round)
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

    async def _answered(
        self, status: str, part: ToolResultPart, kept: ToolResultPart, writes: list[ChunkWrite], **fields: Any
    ) -> ToolCallResult:
        message = Message(role="tool", content=[part]).to_wire()
        memory = Message(role="tool", content=[kept]).to_wire() if kept != part else None
        result = ToolCallResult.model_validate({"status": status, **fields})
        return await self._end(result, writes, [self._transcript_entry(message, memory)])

    def _transcript_entry(self, message: dict[str, Any], memory: dict[str, Any] | None = None) -> TranscriptEntry:
        """The call's place in the transcript (after the step's assistant message)."""
        index = self.input.call.index
        return TranscriptEntry(self.input.step, f"tool-{index:04d}", 1 + index, message, memory)


async def close_batch_if_last(registry: Registry, call_input: ToolCallInput, result: ToolCallResult) -> ToolCallResult:
    """End the segment when this call is the last of its batch to end and the workflow asked for it: when a call
    of the batch waits (``suspended``) or the run ends after the batch."""
    batch = call_input.batch
    if batch is None or result.status == "delegate":  # a call that goes on as a child ends later
        return result
    mine = saved_outcome_key(call_input)
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
    await close_segment(registry, journal, call_input.options, close, reason, close.usage, agent_id=call_input.agent_id)
    return result.model_copy(update={"closed_segment": True})
