"""Arguments an approver changed before approving: who changed what goes into the journal, and the transcript's
assistant message shows the call as approved, so the model reads the arguments the tool ran with.

Written by the tool-call activity of the approved call before the tool runs, in one store transaction: the
``data-tool-args-changed`` chunk (keyed by the call's round, so a retry replaces it in place) and the step's
assistant message rewritten in place (``(step, "assistant")``). The tool then runs with exactly the approved
arguments, which the workflow handed it (the ``approved-arguments`` patch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tempo_agents.journal import constructors
from tempo_agents.store.base import ChunkWrite, TranscriptEntry

__all__ = ["ARGS_CHANGED_CHUNK", "record_changed_args"]

if TYPE_CHECKING:
    from tempo_agents.activities.call_record import CallRecord

ARGS_CHANGED_CHUNK = "data-tool-args-changed"
"""The journal's record of an approver's change: the call, the arguments before and after, and who changed them."""


def _with_args(message: dict[str, Any] | None, tool_call_id: str, args: Any) -> dict[str, Any] | None:
    """``message`` (an assistant message on the wire) with the call's arguments replaced."""
    if message is None or not isinstance(message.get("content"), list):
        return message
    content = [
        {**part, "args": args}
        if isinstance(part, dict) and part.get("type") == "tool-call" and part.get("toolCallId") == tool_call_id
        else part
        for part in message["content"]
    ]
    return {**message, "content": content}


async def record_changed_args(record: CallRecord) -> None:
    """Journal the change and rewrite the call's arguments in the transcript, when an approver changed them."""
    call_input = record.input
    resolution = call_input.resolution
    if resolution is None or resolution.action != "approve" or resolution.args is None:
        return
    call = call_input.call
    store = record.registry.store
    entries = []
    for entry in await store.get_transcript(call_input.run_id):
        if entry.step == call_input.step and entry.part == "assistant":
            message = _with_args(entry.message, call.tool_call_id, call.args)
            kept = _with_args(entry.memory_message, call.tool_call_id, call.args)
            assert message is not None
            entries.append(TranscriptEntry(entry.step, entry.part, entry.position, message, kept))
    shown_before = await record.shown("input", resolution.args_before, input=resolution.args_before)
    chunk = constructors.data_chunk(
        call_input.run_id,
        ARGS_CHANGED_CHUNK,
        {
            **record.base,
            "before": shown_before,
            "after": await record.shown_args(),
            "changedBy": resolution.answered_by,
        },
    )
    await store.record(call_input.run_id, entries, [ChunkWrite(chunk, record.round_key("args-changed"))])
