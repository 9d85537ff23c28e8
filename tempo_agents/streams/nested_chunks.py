"""Chunks of child runs relayed into a parent's journal as ``tool-output`` of the call (``payload.output`` is the
child's chunk, with its ``offset`` in the child's journal)."""

from __future__ import annotations

from typing import Any

from tempo_agents.journal.chunks import Chunk, ToolOutputChunk

__all__ = ["drop_nested_attempt", "is_nested_reset"]


def is_nested_reset(output: Any) -> bool:
    """Whether a relayed chunk is a child's ``step-reset``."""
    return isinstance(output, dict) and output.get("type") == "step-reset"


def drop_nested_attempt(kept: list[Chunk], reset: ToolOutputChunk) -> list[Chunk]:
    """Drop the relayed chunks of the child's failed attempt that ``reset`` voids: from its ``discardFrom``
    offset in the child's journal on, or (without one) the text of its step."""
    call_id = reset.payload.tool_call_id
    payload = reset.payload.output.get("payload") or {}
    discard_from = payload.get("discardFrom")
    text_id = f"text-{payload.get('stepNumber')}"

    def voided(chunk: Chunk) -> bool:
        if not isinstance(chunk, ToolOutputChunk) or chunk.payload.tool_call_id != call_id:
            return False
        output = chunk.payload.output
        if not isinstance(output, dict):
            return False
        if discard_from is not None:
            offset = output.get("offset")
            return isinstance(offset, int) and offset >= discard_from
        return output.get("type") == "text-delta" and (output.get("payload") or {}).get("id") == text_id

    return [chunk for chunk in kept if not voided(chunk)]
