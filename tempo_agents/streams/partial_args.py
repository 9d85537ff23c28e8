"""Previewing tool arguments while the model is still streaming them.

``tool-call-delta`` chunks carry raw JSON fragments. :class:`ToolInputPreview` keeps one buffer per
tool call and parses it leniently after every fragment (with the maintained ``partial-json-parser``
package), so a UI can show a path or a question before the call is complete.
"""

from __future__ import annotations

from typing import Any

from partial_json_parser import MalformedJSON, loads

from tempo_agents.journal.chunks import (
    Chunk,
    StepResetChunk,
    ToolCallChunk,
    ToolCallDeltaChunk,
    ToolInputStreamingStartChunk,
)

__all__ = ["ToolInputPreview", "parse_partial_args"]


def parse_partial_args(text: str) -> Any | None:
    """The value a prefix of a JSON document stands for so far, or ``None`` while nothing can be read yet."""
    if not text.strip():
        return None
    try:
        return loads(text)
    except (MalformedJSON, ValueError, IndexError):
        return None


class ToolInputPreview:
    """Feed it a run's chunks; it answers each argument fragment with the arguments parsed so far."""

    def __init__(self) -> None:
        self._buffers: dict[str, str] = {}
        self.tool_names: dict[str, str] = {}

    def feed(self, chunk: Chunk) -> Any | None:
        """The arguments of the chunk's tool call as far as they have streamed (``None`` for other chunks)."""
        if isinstance(chunk, ToolInputStreamingStartChunk):
            self._buffers[chunk.payload.tool_call_id] = ""
            self.tool_names[chunk.payload.tool_call_id] = chunk.payload.tool_name
            return None
        if isinstance(chunk, ToolCallDeltaChunk):
            call_id = chunk.payload.tool_call_id
            self._buffers[call_id] = self._buffers.get(call_id, "") + chunk.payload.args_text_delta
            return parse_partial_args(self._buffers[call_id])
        if isinstance(chunk, ToolCallChunk):
            self._buffers.pop(chunk.payload.tool_call_id, None)
            return chunk.payload.args
        if isinstance(chunk, StepResetChunk):  # arguments still streaming belong to the failed attempt
            for call_id in self._buffers:
                self.tool_names.pop(call_id, None)
            self._buffers.clear()
        return None

    def text(self, tool_call_id: str) -> str:
        """The raw argument text received so far for a call."""
        return self._buffers.get(tool_call_id, "")
