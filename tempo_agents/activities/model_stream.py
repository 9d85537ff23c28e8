"""The model's answer as it streams: each event journaled as it arrives, and what the step needs afterwards kept.

Text goes to the journal as deltas (batched by the journal writer); a call's arguments stream as previews (as the
tool's display transform shows them, or not at all when it hides them) and run the tool's input lifecycle hooks;
the provider's own tool calls and results (web search) are journaled whole. The text, the calls to sort and the
finish are kept for the end of the step.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tempo_agents.activities.model_calls import parse_args
from tempo_agents.errors import SupersededStartError
from tempo_agents.journal import keys
from tempo_agents.journal.writer import RunJournal
from tempo_agents.models.messages import Message
from tempo_agents.models.model import (
    FinishEvent,
    Model,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallEvent,
    ToolInputDelta,
    ToolInputEnd,
    ToolInputStart,
    ToolResultEvent,
)
from tempo_agents.models.usage import Usage
from tempo_agents.store.base import ChunkWrite
from tempo_agents.tools.lifecycle import ToolLifecycleEvent, run_lifecycle_hook
from tempo_agents.tools.transform import project

if TYPE_CHECKING:
    from tempo_agents.agent.agent import Agent

__all__ = ["ModelAnswer", "StreamedStep", "stream_answer"]


@dataclass(frozen=True)
class ModelAnswer:
    """What the model answered, for the end of the step."""

    text: str
    calls: list[ToolCallEvent]
    """The calls for the step to sort (not the provider's own)."""
    finish: FinishEvent
    buffered: list[ChunkWrite]
    """Streamed chunks not journaled yet: written with the step's last write."""


async def stream_answer(
    model: Model, request: ModelRequest, streamed: StreamedStep, journal: RunJournal, writes: list[ChunkWrite]
) -> ModelAnswer:
    """Call the model and journal its answer as it streams; ``writes`` (the step's first chunks) go with the first
    tokens. A failed attempt journals what it streamed, for the retry's ``step-reset`` to discard."""
    journal.write_soon(writes)
    try:
        async for event in model.stream(request):
            await streamed.handle(event)
        await streamed.close_inputs()
    except BaseException:
        # A superseded start (its workflow task timed out and the worker cancels it) may not write: it ends with
        # its own error.
        with contextlib.suppress(SupersededStartError):
            await journal.flush_text()
        raise
    buffered = await journal.take_buffered()
    return ModelAnswer("".join(streamed.text_parts), streamed.calls, streamed.finish, buffered)


class StreamedStep:
    """Journals what the model streams, as it streams, and keeps what the step needs afterwards."""

    def __init__(self, agent: Agent, journal: RunJournal, step: int, attempt: int, messages: list[Message]) -> None:
        self._agent = agent
        self._journal = journal
        self._step = step
        self._attempt = attempt
        self._messages = messages
        self._names: dict[str, str] = {}
        """Tool calls whose arguments streamed, in the order they started."""
        self.text_parts: list[str] = []
        self.calls: list[ToolCallEvent] = []
        self.finish = FinishEvent(finish_reason="stop", usage=Usage())

    async def handle(self, event: ModelEvent) -> None:
        if isinstance(event, TextDelta):
            self.text_parts.append(event.text)
            await self._journal.text_delta(self._step, event.text)
        elif isinstance(event, ToolInputStart):
            await self._input_start(event)
        elif isinstance(event, ToolInputDelta):
            await self._input_delta(event)
        elif isinstance(event, ToolInputEnd):
            pass  # journaled for every call together in close_inputs(): providers end arguments at different times
        elif isinstance(event, ToolCallEvent) and event.provider_executed:
            await self._provider_call(event)
        elif isinstance(event, ToolCallEvent):
            self.calls.append(event)
        elif isinstance(event, ToolResultEvent):
            await self._provider_result(event)
        elif isinstance(event, FinishEvent):
            self.finish = event

    async def close_inputs(self) -> None:
        """End every streamed argument input once the model is done: the same journal shape for every
        provider (some end a call's arguments when the next begins, some interleave them, some at the end)."""
        for tool_call_id in self._names:
            payload = {"toolCallId": tool_call_id}
            await self._journal.streamed(self._journal.chunk("tool-call-input-streaming-end", payload))

    async def _input_start(self, event: ToolInputStart) -> None:
        self._names[event.tool_call_id] = event.tool_name
        payload = {"toolCallId": event.tool_call_id, "toolName": event.tool_name}
        await self._journal.streamed(self._journal.chunk("tool-call-input-streaming-start", payload))
        await self._hook(event.tool_call_id, "on_input_start")

    async def _input_delta(self, event: ToolInputDelta) -> None:
        name = self._names.get(event.tool_call_id, "")
        shown = await self._display_delta(name, event.tool_call_id, event.args_text_delta)
        if shown is not None:
            payload = {"toolCallId": event.tool_call_id, "toolName": name, "argsTextDelta": shown}
            await self._journal.streamed(self._journal.chunk("tool-call-delta", payload))
        await self._hook(event.tool_call_id, "on_input_delta", event.args_text_delta)

    async def _provider_call(self, event: ToolCallEvent) -> None:
        """A call the provider runs itself (web search): journaled whole, never run by the workflow."""
        _, args = parse_args(event.args_text)
        payload: dict[str, Any] = {
            "toolCallId": event.tool_call_id,
            "toolName": event.tool_name,
            "args": args,
            "providerExecuted": True,
        }
        key = keys.provider_chunk(self._step, self._attempt, event.tool_call_id, "tool-call")
        await self._journal.write([ChunkWrite(self._journal.chunk("tool-call", payload), key)])

    async def _provider_result(self, event: ToolResultEvent) -> None:
        payload: dict[str, Any] = {
            "toolCallId": event.tool_call_id,
            "toolName": event.tool_name,
            "result": event.result,
            "providerExecuted": event.provider_executed,
        }
        key = keys.provider_chunk(self._step, self._attempt, event.tool_call_id, "tool-result")
        await self._journal.write([ChunkWrite(self._journal.chunk("tool-result", payload), key)])

    async def _display_delta(self, tool_name: str, tool_call_id: str, delta: str) -> str | None:
        """The delta clients may see: projected, or nothing when the input is hidden and no safe projection exists."""
        transform = self._agent.transform_for(tool_name) if tool_name in self._agent.tools else None
        if transform is None:
            return delta
        if transform.drops_input_deltas():
            return None
        shown = await project(
            transform,
            "display",
            "input_delta",
            delta,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            input_text_delta=delta,
        )
        return shown if isinstance(shown, str) else None

    async def _hook(self, tool_call_id: str, name: str, delta: str | None = None) -> None:
        tool = self._agent.tools.get(self._names.get(tool_call_id, ""))
        if tool is None:
            return
        hook = tool.on_input_start if name == "on_input_start" else tool.on_input_delta
        event = ToolLifecycleEvent(
            tool_call_id=tool_call_id,
            tool_name=self._names[tool_call_id],
            messages=self._messages,
            input_text_delta=delta,
        )
        await run_lifecycle_hook(hook, name, event)
