"""ScriptedModel: a deterministic model that replays scripted responses, for tests, examples and demos."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import (
    FinishEvent,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallEvent,
    ToolInputDelta,
    ToolInputEnd,
    ToolInputStart,
)
from tempo_agents.models.usage import Usage

__all__ = ["ScriptExhaustedError", "ScriptFunction", "ScriptedModel", "ScriptedResponse", "ScriptedToolCall"]


@dataclass(frozen=True)
class ScriptedToolCall:
    """A tool call in a scripted response. ``args`` may be raw JSON text (to script invalid JSON)."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class ScriptedResponse:
    """One model step: text, tool calls, and optionally usage and the finish reason."""

    text: str = ""
    tool_calls: Sequence[ScriptedToolCall] = ()
    usage: Usage | None = None
    finish_reason: str | None = None


ScriptFunction = Callable[[ModelRequest], ScriptedResponse | Awaitable[ScriptedResponse]]


class ScriptExhaustedError(ConfigurationError):
    """The run asked for more steps than the script has."""

    code = "SCRIPT_EXHAUSTED"


_WORD = re.compile(r"\S+\s*|\s+")
_RECORDED_REQUESTS = 1000


class ScriptedModel:
    """Replays ``responses[step]`` for each model step of a run, or asks ``responses(request)``.

    Text is streamed word by word and tool-call arguments in a few fragments, as providers stream
    them (``stream_tool_inputs=False`` sends whole calls only). Every request is recorded in
    :attr:`requests` (the most recent 1,000), so tests can
    assert on the prompts and tool definitions a run sent. Tool calls without an ``id`` get
    ``call_<step>_<index>``, stable across activity retries.
    """

    def __init__(
        self,
        responses: Sequence[ScriptedResponse] | ScriptFunction,
        *,
        model_id: str = "scripted",
        delta_delay: float = 0.0,
        stream_tool_inputs: bool = True,
    ) -> None:
        self._responses = responses
        self._stream_tool_inputs = stream_tool_inputs
        self._model_id = model_id
        self._delta_delay = delta_delay
        self.requests: list[ModelRequest] = []

    @property
    def provider(self) -> str:
        return "scripted"

    @property
    def model_id(self) -> str:
        return self._model_id

    async def _response_for(self, request: ModelRequest) -> ScriptedResponse:
        if callable(self._responses):
            produced = self._responses(request)
            return await produced if inspect.isawaitable(produced) else produced
        if request.step >= len(self._responses):
            raise ScriptExhaustedError(
                f"ScriptedModel has {len(self._responses)} responses but the run asked for step "
                f"{request.step + 1}; add responses or lower max_steps"
            )
        return self._responses[request.step]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        del self.requests[:-_RECORDED_REQUESTS]
        response = await self._response_for(request)
        for word in _WORD.findall(response.text):
            if self._delta_delay:
                await asyncio.sleep(self._delta_delay)
            yield TextDelta(text=word)
        calls = [
            ToolCallEvent(
                tool_call_id=call.id or f"call_{request.step}_{index}",
                tool_name=call.name,
                args_text=call.args if isinstance(call.args, str) else json.dumps(call.args),
            )
            for index, call in enumerate(response.tool_calls)
        ]
        if self._stream_tool_inputs:
            for call_event in calls:
                yield ToolInputStart(tool_call_id=call_event.tool_call_id, tool_name=call_event.tool_name)
                for fragment in _fragments(call_event.args_text):
                    yield ToolInputDelta(tool_call_id=call_event.tool_call_id, args_text_delta=fragment)
                yield ToolInputEnd(tool_call_id=call_event.tool_call_id)
        for call_event in calls:
            yield call_event
        usage = response.usage or _estimated_usage(request, response)
        reason = response.finish_reason or ("tool-calls" if response.tool_calls else "stop")
        yield FinishEvent(finish_reason=reason, usage=usage)


def _fragments(text: str, pieces: int = 3) -> list[str]:
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _estimated_usage(request: ModelRequest, response: ScriptedResponse) -> Usage:
    prompt_words = sum(len(message.text.split()) for message in request.messages)
    output_words = len(response.text.split()) + len(response.tool_calls)
    return Usage(input_tokens=prompt_words, output_tokens=output_words, total_tokens=prompt_words + output_words)
