"""The child-relay activity: how a call that runs as a child workflow shows in its parent's journal.

For a sub-agent (``agent-<key>``) it copies the child's journal into the parent's, each chunk once as a
``tool-output`` of the call (keyed by the child's offset, so a retried relay rewrites, never duplicates),
until a segment of the child ends. Then it records how the call stands in one transaction with its saved
outcome: the child's result, its failure (a tool error), or its first waiting call (the call suspends, under
the parent's tool name). For a workflow tool it records the outcome the parent workflow saw.
ARCHITECTURE.md, "Sub-agents and workflows as tools".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tempo_agents.activities.call_record import CallRecord, close_batch_if_last
from tempo_agents.activities.kept_answer import end_answered_wait
from tempo_agents.agent.delegation import DelegationComplete
from tempo_agents.journal import keys
from tempo_agents.journal.chunks import Chunk, ToolErrorChunk, ToolResultChunk, chunk_from_wire
from tempo_agents.journal.outbox_flush import write_outbox
from tempo_agents.store.base import ChunkWrite, JournalEntry
from tempo_agents.streams import collect_result
from tempo_agents.tools.suspension import schema_string
from tempo_agents.tools.user_code import call_user_function
from tempo_agents.workflows.child_payloads import ChildOutcome
from tempo_agents.workflows.payloads import ChildRelayInput, ChildRelayResult, Suspension, ToolCallResult

__all__ = ["WAIT_SECONDS", "run_child_relay"]

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry
    from tempo_agents.store.base import Store

WAIT_SECONDS = 1.0
"""How long one wait for the child's next chunks lasts (the relay heartbeats in between)."""

_ENDED = ("tool-result", "tool-error", "tool-output-denied")
_WAITING = ("tool-call-suspended", "tool-call-approval")


async def run_child_relay(registry: Registry, relay: ChildRelayInput) -> ChildRelayResult:
    """Relay a child's segment into the parent's journal and record how the parent's call stands."""
    call_input = relay.call
    store = registry.store
    await end_answered_wait(store, call_input)  # the parent's call was answered: it no longer waits
    # a resumed child call carries the parent's outbox
    await write_outbox(store, registry.transcripts, call_input.run_id, call_input.outbox)
    record = CallRecord(registry, call_input)
    start = relay.start
    if relay.outcome is not None:
        result = await _record_outcome(record, relay, relay.outcome)
        return ChildRelayResult(result=await close_batch_if_last(registry, call_input, result), cursor=relay.cursor)

    cursor, finish = await _copy_segment(record, store, start.child_run_id, relay.cursor)
    chunks = [chunk_from_wire(entry.chunk, entry.offset) for entry in await _read_all(store, start.child_run_id)]
    reason = finish.get("payload", {}).get("stepResult", {}).get("reason")
    child_call: str | None = None
    if reason == "suspended":
        waiting = _first_waiting(chunks)
        if waiting is None:
            result = await _agent_failed(record, relay, "the sub-agent suspended, but no call of it waits")
        else:
            child_call = waiting["payload"]["toolCallId"]
            result = await _suspend_parent(record, relay, waiting)
    else:
        collected = collect_result(start.child_run_id, chunks)
        if collected.error is not None or reason in ("error", "aborted"):
            result = await _agent_failed(record, relay, collected.error or reason or "error")
        else:
            output: dict[str, Any] = {"text": collected.text}
            if start.thread_id is not None:
                output["subAgentThreadId"] = start.thread_id
                output["subAgentResourceId"] = start.resource_id
            output["subAgentToolResults"] = _tool_results(collected.chunks)
            model_output = collected.text
            feedback = await _on_complete(record, relay, output, None)
            if feedback:
                model_output = f"{model_output}\n\n{feedback}" if model_output else feedback
            result = await record.result(output, model_output)
    closed = await close_batch_if_last(registry, call_input, result)
    return ChildRelayResult(result=closed, cursor=cursor, child_tool_call_id=child_call)


def _tool_results(chunks: list[Chunk]) -> list[dict[str, Any]]:
    """The sub-agent's tool results and errors, in the order they came."""
    results: list[dict[str, Any]] = []
    for chunk in chunks:
        if isinstance(chunk, ToolResultChunk):
            p = chunk.payload
            results.append({"toolName": p.tool_name, "toolCallId": p.tool_call_id, "result": p.result, "args": p.args})
        elif isinstance(chunk, ToolErrorChunk):
            e = chunk.payload
            results.append(
                {
                    "toolName": e.tool_name,
                    "toolCallId": e.tool_call_id,
                    "result": e.error,
                    "args": e.args,
                    "isError": True,
                }
            )
    return results


async def _copy_segment(record: CallRecord, store: Store, child_run_id: str, cursor: int) -> tuple[int, dict[str, Any]]:
    """Copy the child's chunks from ``cursor`` up to the ``finish`` of its segment; returns the offset after it."""
    call = record.input.call
    while True:
        entries = await store.read_chunks(child_run_id, cursor, limit=500)
        if not entries:
            await store.wait_for_chunks(child_run_id, cursor, timeout=WAIT_SECONDS)
            continue
        finish = next((e for e in entries if e.chunk.get("type") == "finish"), None)
        if finish is not None:
            entries = [e for e in entries if e.offset <= finish.offset]
        writes = [
            ChunkWrite(
                record.journal.chunk("tool-output", {**record.base, "output": {**entry.chunk, "offset": entry.offset}}),
                keys.child_chunk(record.input.step, call.tool_call_id, entry.offset),
            )
            for entry in entries
        ]
        await record.journal.write(writes)
        cursor = entries[-1].offset + 1
        if finish is not None:
            return cursor, finish.chunk


async def _read_all(store: Store, run_id: str) -> list[JournalEntry]:
    entries: list[JournalEntry] = []
    while True:
        page = await store.read_chunks(run_id, entries[-1].offset + 1 if entries else 0, limit=1000)
        if not page:
            return entries
        entries.extend(page)


def _first_waiting(chunks: list[Chunk]) -> dict[str, Any] | None:
    """The child's first call that still waits for a person (its suspension or approval chunk)."""
    waiting: dict[str, dict[str, Any]] = {}
    for chunk in chunks:
        wire = chunk.model_dump(mode="json", by_alias=True, exclude_none=True)
        call_id = wire.get("payload", {}).get("toolCallId")
        if chunk.type in _WAITING and call_id is not None:
            waiting[call_id] = wire
        elif chunk.type in _ENDED and call_id is not None:
            waiting.pop(call_id, None)
    return next(iter(waiting.values()), None)


async def _suspend_parent(record: CallRecord, relay: ChildRelayInput, waiting: dict[str, Any]) -> ToolCallResult:
    """The parent's call waits for what its child waits for, under the parent's tool name."""
    inner = waiting["payload"]
    link = {
        "childRunId": relay.start.child_run_id,
        "childToolCallId": inner["toolCallId"],
        "childToolName": inner["toolName"],
    }
    args = await record.shown_args()
    if waiting["type"] == "tool-call-approval":
        approval = {"toolName": inner["toolName"], "args": inner.get("args")}
        suspension = Suspension(
            kind="approval", tool_id=inner["toolName"], suspend_payload=approval, approvers=_approvers(inner)
        )
        return await record.suspended(suspension, args=args, link=link)
    suspend_payload = inner.get("suspendPayload")
    suspension = Suspension(
        kind="suspension",
        tool_id=inner["toolName"],
        suspend_payload=suspend_payload,
        resume_schema=inner.get("resumeSchema") or "",
        approvers=_approvers(inner),
    )
    return await record.suspended(suspension, args=args, shown_payload=suspend_payload, link=link)


def _approvers(inner: dict[str, Any]) -> list[str]:
    """Who may answer the child's call: the parent's call is assigned to them too (the child checks again)."""
    approvers = inner.get("approvers")
    return [str(name) for name in approvers] if isinstance(approvers, list) else []


async def _agent_failed(record: CallRecord, relay: ChildRelayInput, error: str) -> ToolCallResult:
    await _on_complete(record, relay, None, error)
    return await record.error(f"[Agent:{record.agent.name}] - Failed agent tool execution for {relay.start.key}")


async def _on_complete(
    record: CallRecord, relay: ChildRelayInput, output: dict[str, Any] | None, error: str | None
) -> Any:
    """Run the parent's ``on_delegation_complete``; returns its feedback, if any."""
    hooks = record.agent.delegation
    if hooks is None or hooks.on_delegation_complete is None:
        return None
    event = DelegationComplete(
        agent_key=relay.start.key, child_run_id=relay.start.child_run_id, result=output, error=error
    )
    answer = await call_user_function(hooks.on_delegation_complete, event)
    return answer.get("feedback") if isinstance(answer, dict) else None


async def _record_outcome(record: CallRecord, relay: ChildRelayInput, outcome: ChildOutcome) -> ToolCallResult:
    """How a workflow tool (or a child that could not start) ended, as the parent workflow saw it."""
    start = relay.start
    if outcome.status == "error":
        if start.kind == "agent":
            return await _agent_failed(record, relay, outcome.error or "error")
        return await record.error(f"[Agent:{record.agent.name}] - Failed workflow tool execution")
    if outcome.status == "result":
        value = {"result": outcome.result, "runId": start.child_run_id}
        return await record.result(value, value)
    if outcome.status == "failed":
        value = {"error": outcome.error or "Workflow execution failed", "runId": start.child_run_id}
        return await record.result(value, value)
    suspension = outcome.suspension
    payload = suspension.suspend_payload if suspension is not None else None
    schema = suspension.resume_schema if suspension is not None else None
    waits = Suspension(
        kind="suspension", tool_id=record.tool.id, suspend_payload=payload, resume_schema=schema_string(schema)
    )
    args = await record.shown_args()
    return await record.suspended(waits, args=args, shown_payload=payload, link={"childRunId": start.child_run_id})
