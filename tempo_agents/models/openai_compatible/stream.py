"""Reading a Chat Completions answer: the event stream's chunks (or one whole completion) as model events.

Text deltas, tool-call fragments by index or id (a legacy ``function_call`` too, when the stream has no
``tool_calls``), usage, the finish reason, and web search citations gathered into one provider-executed call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

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
from tempo_agents.models.openai_compatible.errors import CallFailures
from tempo_agents.models.provider_http import SSEDecoder, SSEEvent
from tempo_agents.models.usage import Usage

__all__ = ["StreamState", "cached_input_tokens_of", "usage_of"]

_FINISH_REASONS = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "tool_use": "tool-calls",
    "content_filter": "content-filter",
    "error": "error",
}


@dataclass
class _ToolCall:
    id: str
    server_id: bool
    name: str = ""
    started: bool = False
    args: list[str] = field(default_factory=list)
    finished: bool = False


class StreamState:
    """Assembles events from Chat Completions chunks: text, indexed tool-call fragments, usage, finish."""

    def __init__(self, failures: CallFailures, *, step: int, web_search_name: str | None) -> None:
        self._failures = failures
        self._step = step
        self._web_search_name = web_search_name
        self._calls: list[_ToolCall] = []
        self._by_index: dict[int, _ToolCall] = {}
        self._by_id: dict[str, _ToolCall] = {}
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._cached_input_tokens = 0
        self._response_id: str | None = None
        self._sources: dict[str, dict[str, Any]] = {}
        self._sse = SSEDecoder()
        self._saw_tool_calls = False
        self.done = False

    def feed_line(self, line: str) -> list[ModelEvent]:
        """One line of the event stream; a blank line completes the event its ``data:`` lines carried."""
        event = self._sse.feed(line)
        return self._on_event(event) if event is not None else []

    def end_of_body(self) -> list[ModelEvent]:
        """The body ended; without ``[DONE]`` or a finish reason the response is incomplete. An event the body
        ended in without a blank line after it is read (some servers do not end their last event)."""
        events = self._on_event(self._sse.end())
        if self.done:
            return events
        if self._finish_reason is None:
            raise self._failures.incomplete_error()
        # Some servers end the body without ``[DONE]`` after the finish reason: accept it.
        self.done = True
        return events + self._final_events()

    def _on_event(self, event: SSEEvent | None) -> list[ModelEvent]:
        if event is None or self.done:
            return []
        return self._dispatch(event.data, event.event)

    def _dispatch(self, data: str, event_name: str) -> list[ModelEvent]:
        if data.strip() == "[DONE]":
            self.done = True
            return self._final_events()
        try:
            payload = json.loads(data)
        except ValueError:
            if event_name == "error":
                raise self._failures.stream_error({"error": {"message": data}}) from None
            # A damaged event: skipping it would silently lose part of the answer.
            raise self._failures.malformed_event_error(data) from None
        if event_name == "error" or (isinstance(payload, dict) and payload.get("error")):
            raise self._failures.stream_error(payload)
        if not isinstance(payload, dict):
            return []
        return self._chunk(payload)

    def whole_response(self, payload: Any) -> list[ModelEvent]:
        """Events for a non-streamed ``chat.completion`` body."""
        if not isinstance(payload, dict) or payload.get("error") or not isinstance(payload.get("choices"), list):
            raise self._failures.stream_error(payload if payload is not None else {"error": {"message": "empty body"}})
        choices: list[Any] = []
        for choice in payload["choices"]:
            if not isinstance(choice, dict):
                continue
            message = dict(choice.get("message") or {})
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                message["tool_calls"] = [
                    {**call, "index": index} for index, call in enumerate(calls) if isinstance(call, dict)
                ]
            choices.append({**choice, "delta": message, "finish_reason": choice.get("finish_reason") or "stop"})
        events = self._chunk({**payload, "choices": choices})
        self.done = True
        return events + self._final_events()

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if self._response_id is None and isinstance(chunk.get("id"), str):
            self._response_id = chunk["id"]
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = usage_of(usage)
            self._cached_input_tokens = cached_input_tokens_of(usage)
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                for key in ("content", "refusal"):
                    text = delta.get(key)
                    if isinstance(text, str) and text:
                        events.append(TextDelta(text=text))
                events.extend(self._tool_call_delta(delta))
                self._annotations(delta.get("annotations"))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self._finish_reason = reason
                events.extend(self._complete_calls())
        return events

    def _tool_call_delta(self, delta: dict[str, Any]) -> list[ModelEvent]:
        """Tool-call fragments of one delta: ``tool_calls``, else the legacy single ``function_call``.

        Some servers send ``function_call`` beside ``tool_calls`` (a copy of the first call); it is read
        only from a stream that has not sent ``tool_calls``, so a call is never counted twice.
        """
        fragments = delta.get("tool_calls")
        if isinstance(fragments, list) and fragments:
            self._saw_tool_calls = True
            return [event for item in fragments if isinstance(item, dict) for event in self._tool_fragment(item)]
        legacy = delta.get("function_call")
        if isinstance(legacy, dict) and not self._saw_tool_calls:
            return self._tool_fragment({"index": 0, "function": legacy})
        return []

    def _tool_fragment(self, fragment: dict[str, Any]) -> list[ModelEvent]:
        index = fragment.get("index")
        call_id = fragment.get("id") if isinstance(fragment.get("id"), str) and fragment.get("id") else None
        call: _ToolCall | None = None
        if call_id is not None and call_id in self._by_id:
            call = self._by_id[call_id]
        elif isinstance(index, int) and index in self._by_index:
            known = self._by_index[index]
            # A different id at a known index is a new call (some servers send every call at index 0).
            if call_id is None or not known.server_id or known.id == call_id:
                call = known
        elif index is None and call_id is None and self._calls:
            call = self._calls[-1]
        if call is None or call.finished:
            slot = len(self._calls)
            call = _ToolCall(id=call_id or f"call_{self._step}_{slot}", server_id=call_id is not None)
            self._calls.append(call)
            self._by_index[index if isinstance(index, int) else slot] = call
            self._by_id[call.id] = call
        elif call_id is not None and not call.server_id and not call.started:
            call.id, call.server_id = call_id, True
            self._by_id[call_id] = call

        events: list[ModelEvent] = []
        function = fragment.get("function")
        function = function if isinstance(function, dict) else {}
        name = function.get("name")
        if isinstance(name, str) and name and not call.name:
            call.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send parsed arguments
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(arguments, str) and arguments:
            call.args.append(arguments)
            if call.started:
                events.append(ToolInputDelta(tool_call_id=call.id, args_text_delta=arguments))
        if not call.started and call.name:
            events.extend(self._start(call))
        return events

    def _start(self, call: _ToolCall) -> list[ModelEvent]:
        call.started = True
        events: list[ModelEvent] = [ToolInputStart(tool_call_id=call.id, tool_name=call.name)]
        events.extend(ToolInputDelta(tool_call_id=call.id, args_text_delta=text) for text in call.args)
        return events

    def _complete_calls(self) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        for call in self._calls:
            if call.finished:
                continue
            if not call.started:
                events.extend(self._start(call))
            call.finished = True
            events.append(ToolInputEnd(tool_call_id=call.id))
            events.append(ToolCallEvent(tool_call_id=call.id, tool_name=call.name, args_text="".join(call.args)))
        return events

    def _annotations(self, annotations: Any) -> None:
        if self._web_search_name is None or not isinstance(annotations, list):
            return
        for annotation in annotations:
            if not isinstance(annotation, dict) or annotation.get("type") != "url_citation":
                continue
            citation = annotation.get("url_citation")
            citation = citation if isinstance(citation, dict) else annotation
            url = citation.get("url")
            if isinstance(url, str) and url not in self._sources:
                self._sources[url] = {"type": "url", "url": url, "title": citation.get("title")}

    def _final_events(self) -> list[ModelEvent]:
        events = self._complete_calls()
        if self._sources and self._web_search_name is not None:
            call_id = f"ws_{self._response_id or f'step_{self._step}'}"
            events.append(
                ToolCallEvent(
                    tool_call_id=call_id, tool_name=self._web_search_name, args_text="{}", provider_executed=True
                )
            )
            events.append(
                ToolResultEvent(
                    tool_call_id=call_id,
                    tool_name=self._web_search_name,
                    result={"sources": list(self._sources.values())},
                )
            )
        reason = _FINISH_REASONS.get(self._finish_reason or "", "other")
        if self._calls and reason in ("stop", "other"):
            reason = "tool-calls"  # some servers say "stop" after tool calls
        events.append(
            FinishEvent(
                finish_reason=reason, usage=self._usage or Usage(), cached_input_tokens=self._cached_input_tokens
            )
        )
        return events


def cached_input_tokens_of(raw: dict[str, Any]) -> int:
    """The prompt tokens read from the provider's cache (``prompt_tokens_details.cached_tokens``)."""
    details = raw.get("prompt_tokens_details") or raw.get("input_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return cached if isinstance(cached, int) and not isinstance(cached, bool) and cached > 0 else 0


def usage_of(raw: dict[str, Any]) -> Usage:
    def count(*keys: str) -> int:
        for key in keys:
            value = raw.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return int(value)
        return 0

    input_tokens = count("prompt_tokens", "input_tokens")
    output_tokens = count("completion_tokens", "output_tokens")
    total = count("total_tokens") or input_tokens + output_tokens
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens, total_tokens=total)
