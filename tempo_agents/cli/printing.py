"""Printing a run's chunks at the terminal: text inline, tool activity, errors and the finish on lines of their own."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TextIO

from tempo_agents.journal.chunks import (
    Chunk,
    DataChunk,
    ErrorChunk,
    FinishChunk,
    StartChunk,
    StepFinishChunk,
    StepResetChunk,
    StepStartChunk,
    TextDeltaChunk,
    ToolCallChunk,
    ToolCallDeltaChunk,
    ToolErrorChunk,
    ToolInputStreamingEndChunk,
    ToolInputStreamingStartChunk,
    ToolOutputChunk,
    ToolResultChunk,
)
from tempo_agents.models.usage import Usage

__all__ = ["ChunkPrinter", "json_preview", "relayed_chunk"]


def json_preview(value: Any, limit: int = 400) -> str:
    """``value`` as JSON, cut after ``limit`` characters (saying how many more there were)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


_LIFECYCLE = frozenset({"start", "step-start", "step-finish"})
"""Shown only with offsets: a plain run print keeps to text, tool activity and the outcome."""
_NESTED_QUIET = frozenset(
    {"tool-call-input-streaming-start", "tool-call-delta", "tool-call-input-streaming-end", "tool-output", "finish"}
)
"""A sub-agent's argument previews, its own tools' progress and its finish (the call's result follows) stay out
of the parent's print."""


def relayed_chunk(output: Any) -> dict[str, Any] | None:
    """The sub-agent's chunk a ``tool-output`` carries (the parent's journal relays it), else ``None``."""
    if isinstance(output, dict) and isinstance(output.get("type"), str) and "runId" in output:
        return output
    return None


_ARGUMENT_PREVIEWS = (ToolInputStreamingStartChunk, ToolCallDeltaChunk, ToolInputStreamingEndChunk)
"""Argument previews: the tool-call line that follows shows the whole call."""


@dataclass
class ChunkPrinter:
    """Writes a run's chunks readably: text inline, everything else on its own line.

    ``offsets`` prefixes every line with the chunk's journal offset and shows the run's lifecycle
    chunks (start, steps) too; without it only text, tool activity, errors and the finish show.
    """

    out: TextIO
    offsets: bool = False
    in_text: bool = False
    finish: FinishChunk | None = None
    errors: list[str] = field(default_factory=list)
    nested_text: dict[str, str] = field(default_factory=dict)
    """Text of sub-agent runs not printed yet, by the parent's tool call."""

    def _line(self, chunk: Chunk, label: str, body: str) -> None:
        self._end_text()
        prefix = f"{chunk.offset if chunk.offset is not None else '':>4}  " if self.offsets else "  "
        self.out.write(f"{prefix}{label:<12} {body}\n")
        self.out.flush()

    def _end_text(self) -> None:
        if self.in_text:
            self.out.write("\n")
            self.in_text = False

    def write(self, chunk: Chunk) -> None:
        """Print one chunk (text deltas continue the current text line)."""
        if isinstance(chunk, TextDeltaChunk):
            self._text(chunk)
        elif isinstance(chunk, _ARGUMENT_PREVIEWS) or (chunk.type in _LIFECYCLE and not self.offsets):
            return
        elif isinstance(chunk, ToolOutputChunk) and (nested := relayed_chunk(chunk.payload.output)) is not None:
            self._nested(chunk, nested)
        else:
            label, body = _tool_line(chunk) or self._run_line(chunk)
            self._line(chunk, label, body)

    def _text(self, chunk: TextDeltaChunk) -> None:
        """Text continues the current text line (which starts with its offset when offsets are shown)."""
        if not self.in_text:
            if self.offsets:
                self.out.write(f"{chunk.offset if chunk.offset is not None else '':>4}  {'text':<12} ")
            self.in_text = True
        self.out.write(chunk.payload.text)
        self.out.flush()

    def _run_line(self, chunk: Chunk) -> tuple[str, str]:
        """The line of a chunk about the run: an error, the finish, a data chunk, a step, or any other chunk."""
        if isinstance(chunk, ErrorChunk):
            self.errors.append(chunk.payload.error)
            return "error", chunk.payload.error
        if isinstance(chunk, FinishChunk):
            self.finish = chunk
            return "finish", self.summary()
        if isinstance(chunk, DataChunk):
            extra = chunk.model_dump(mode="json", exclude={"type", "run_id", "from_", "offset"}, exclude_none=True)
            return chunk.type, json_preview(extra)
        if isinstance(chunk, StepResetChunk):
            step = chunk.payload.step_number
            return "step-reset", f"step {step} retried (attempt {chunk.payload.attempt}), its text restarts"
        if isinstance(chunk, StartChunk):
            return "start", f"agent {chunk.payload.agent_id}"
        if isinstance(chunk, StepStartChunk):
            return "step-start", f"step {chunk.payload.step_number}"
        if isinstance(chunk, StepFinishChunk):
            outcome = chunk.payload.step_result
            more = ", continues" if outcome.is_continued else ""
            return "step-finish", f"reason {outcome.reason}{more}, usage {_usage(chunk.payload.output.usage)}"
        # Chunk types without a dedicated line (suspensions, approvals, ...): type and payload.
        wire = chunk.model_dump(mode="json", by_alias=True, exclude_none=True)
        return chunk.type, json_preview(wire.get("payload"))

    def _nested(self, chunk: ToolOutputChunk, nested: dict[str, Any]) -> None:
        """A chunk of a sub-agent's run: its text gathered into one line, its tool activity and outcome."""
        call = chunk.payload.tool_call_id
        nested_type = nested.get("type")
        raw = nested.get("payload")
        payload: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if nested_type == "text-delta":
            self.nested_text[call] = self.nested_text.get(call, "") + str(payload.get("text", ""))
            return
        text = self.nested_text.pop(call, "")
        if text:
            self._line(chunk, "sub-text", f"{chunk.payload.tool_name} ▸ {text}")
        if nested_type in _NESTED_QUIET or (nested_type in _LIFECYCLE and not self.offsets):
            return
        body = {key: value for key, value in payload.items() if key not in ("toolCallId",)}
        self._line(chunk, "sub-" + str(nested_type), f"{chunk.payload.tool_name} ▸ {json_preview(body)}")

    def close(self) -> None:
        """End an unfinished text line."""
        self._end_text()
        self.out.flush()

    def summary(self) -> str:
        """The finish reason, step count and usage, or that the run ended without a finish."""
        if self.finish is None:
            return "the run ended without a finish chunk"
        payload = self.finish.payload
        return (
            f"reason {payload.step_result.reason}, {payload.output.steps} step(s), usage {_usage(payload.output.usage)}"
        )

    @property
    def failed(self) -> bool:
        """Whether the run reported an error or did not finish."""
        return bool(self.errors) or self.finish is None or self.finish.payload.step_result.reason == "error"


def _tool_line(chunk: Chunk) -> tuple[str, str] | None:
    """The line of a tool's call, output, result or error (an output relayed from a sub-agent is not one)."""
    if isinstance(chunk, ToolCallChunk):
        call = chunk.payload
        return "tool-call", f"{call.tool_name} {json_preview(call.args)}  [{call.tool_call_id}]"
    if isinstance(chunk, ToolOutputChunk):
        return "tool-output", f"{chunk.payload.tool_name} {json_preview(chunk.payload.output)}"
    if isinstance(chunk, ToolResultChunk):
        result = chunk.payload
        marker = " (error)" if result.is_error else ""
        return "tool-result", f"{result.tool_name}{marker} {json_preview(result.result)}"
    if isinstance(chunk, ToolErrorChunk):
        return "tool-error", f"{chunk.payload.tool_name}: {chunk.payload.error}"
    return None


def _usage(usage: Usage) -> str:
    return f"{usage.input_tokens} in + {usage.output_tokens} out = {usage.total_tokens} tokens"
