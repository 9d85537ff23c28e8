"""Reading a Messages API answer: its stream events as model events.

Text and tool-use blocks stream as text and tool-input deltas; a ``server_tool_use`` block (web search) is a
provider-executed call and its ``*_tool_result`` block that call's result (the raw ``content``, kept whole so it
can be sent back). Usage counts the whole prompt (input, cache creation and cache reads) from
``message_start``, and the output of the last ``message_delta``; ``message_stop`` makes the finish event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tempo_agents.models.anthropic.errors import CallFailures
from tempo_agents.models.model import (
    FinishEvent,
    ModelEvent,
    TextDelta,
    ToolCallEvent,
    ToolInputDelta,
    ToolInputEnd,
    ToolInputStart,
    ToolResultEvent,
)
from tempo_agents.models.usage import Usage

__all__ = ["FINISH_REASONS", "StreamDecoder"]

FINISH_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
    "pause_turn": "other",
}


@dataclass
class _Block:
    kind: Literal["text", "tool_use", "server_tool_use", "tool_result", "other"]
    id: str = ""
    name: str = ""
    start_input: Any = None
    args: list[str] = field(default_factory=list)
    content: Any = None


class StreamDecoder:
    """Turns Anthropic stream events into :class:`ModelEvent` s; ``finish`` is set by ``message_stop``."""

    def __init__(self, failures: CallFailures, server_tool_names: Mapping[str, str]) -> None:
        self._failures = failures
        self._server_tool_names = server_tool_names
        self._blocks: dict[int, _Block] = {}
        self._call_names: dict[str, str] = {}
        self._input_tokens = 0
        self._cached_input_tokens = 0
        self._output_tokens = 0
        self._stop_reason: str | None = None
        self.finish: FinishEvent | None = None

    def handle(self, event_name: str, data_text: str) -> list[ModelEvent]:
        try:
            data = json.loads(data_text)
        except ValueError:
            raise self._failures.broken_event(event_name, data_text) from None
        if not isinstance(data, dict):
            return []
        kind = data.get("type") or event_name
        if kind == "error" or event_name == "error":
            error = _dict(data.get("error"))
            raise self._failures.event_error(str(error.get("type") or "api_error"), str(error.get("message") or ""))
        if self.finish is not None:
            return []
        if kind == "message_start":
            self._usage(_dict(_dict(data.get("message")).get("usage")))
        elif kind == "content_block_start":
            return self._block_start(_index(data), _dict(data.get("content_block")))
        elif kind == "content_block_delta":
            return self._block_delta(_index(data), _dict(data.get("delta")))
        elif kind == "content_block_stop":
            return self._block_stop(_index(data))
        elif kind == "message_delta":
            reason = _dict(data.get("delta")).get("stop_reason")
            if reason:
                self._stop_reason = str(reason)
            self._usage(_dict(data.get("usage")))
        elif kind == "message_stop":
            usage = Usage(
                input_tokens=self._input_tokens,
                output_tokens=self._output_tokens,
                total_tokens=self._input_tokens + self._output_tokens,
            )
            reason = FINISH_REASONS.get(self._stop_reason or "", "other")
            self.finish = FinishEvent(finish_reason=reason, usage=usage, cached_input_tokens=self._cached_input_tokens)
        return []  # ping and unknown events

    def _usage(self, usage: Mapping[str, Any]) -> None:
        parts = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        if any(isinstance(usage.get(name), int) for name in parts):
            self._input_tokens = sum(usage.get(name) or 0 for name in parts)
            self._cached_input_tokens = usage.get("cache_read_input_tokens") or 0
        if isinstance(usage.get("output_tokens"), int):
            self._output_tokens = usage["output_tokens"]

    def _block_start(self, index: int, block: Mapping[str, Any]) -> list[ModelEvent]:
        block_type = str(block.get("type", ""))
        if block_type == "text":
            self._blocks[index] = _Block("text")
            text = block.get("text")
            return [TextDelta(text=text)] if isinstance(text, str) and text else []
        if block_type in ("tool_use", "server_tool_use"):
            call_id = str(block.get("id", ""))
            name = str(block.get("name", ""))
            provider_executed = block_type == "server_tool_use"
            if provider_executed:
                name = self._server_tool_names.get(name, name)
            self._call_names[call_id] = name
            kind: Literal["tool_use", "server_tool_use"] = "server_tool_use" if provider_executed else "tool_use"
            self._blocks[index] = _Block(kind, id=call_id, name=name, start_input=block.get("input"))
            return [ToolInputStart(tool_call_id=call_id, tool_name=name)]
        if block_type.endswith("_tool_result") and "tool_use_id" in block:
            call_id = str(block["tool_use_id"])
            name = self._call_names.get(call_id) or block_type.removesuffix("_tool_result")
            self._blocks[index] = _Block("tool_result", id=call_id, name=name, content=block.get("content"))
            return []
        self._blocks[index] = _Block("other")  # thinking, redacted_thinking, ...
        return []

    def _block_delta(self, index: int, delta: Mapping[str, Any]) -> list[ModelEvent]:
        block = self._blocks.get(index)
        delta_type = delta.get("type")
        if delta_type == "text_delta":
            text = delta.get("text")
            return [TextDelta(text=text)] if isinstance(text, str) and text else []
        if delta_type == "input_json_delta" and block is not None and block.kind in ("tool_use", "server_tool_use"):
            fragment = delta.get("partial_json")
            if isinstance(fragment, str) and fragment:
                block.args.append(fragment)
                return [ToolInputDelta(tool_call_id=block.id, args_text_delta=fragment)]
        return []  # citations_delta, thinking_delta, signature_delta, ...

    def _block_stop(self, index: int) -> list[ModelEvent]:
        block = self._blocks.pop(index, None)
        if block is None:
            return []
        if block.kind in ("tool_use", "server_tool_use"):
            args_text = "".join(block.args)
            if not args_text.strip():
                args_text = json.dumps(block.start_input) if isinstance(block.start_input, dict) else "{}"
            return [
                ToolInputEnd(tool_call_id=block.id),
                ToolCallEvent(
                    tool_call_id=block.id,
                    tool_name=block.name,
                    args_text=args_text,
                    provider_executed=block.kind == "server_tool_use",
                ),
            ]
        if block.kind == "tool_result":
            return [ToolResultEvent(tool_call_id=block.id, tool_name=block.name, result=block.content)]
        return []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _index(data: Mapping[str, Any]) -> int:
    index = data.get("index")
    return index if isinstance(index, int) else -1
