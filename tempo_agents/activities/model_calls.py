"""The tool calls of a model's answer, sorted: the calls the workflow runs, and the calls the step answers at once
with a tool error the model reads (a tool the run may not call, arguments that are not JSON).

Every call is journaled as ``tool-call`` with its arguments as the tool's display transform shows them, and kept
in the assistant message: whole in the run's transcript, as the transcript transform keeps them in memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tempo_agents.journal import keys
from tempo_agents.journal.writer import RunJournal
from tempo_agents.models.messages import Message, ToolCallPart, ToolResultPart
from tempo_agents.models.model import ToolCallEvent
from tempo_agents.store.base import ChunkWrite, TranscriptEntry
from tempo_agents.tools.tool import Tool
from tempo_agents.tools.transform import project
from tempo_agents.workflows.payloads import ModelStepInput, ToolCallRequest

if TYPE_CHECKING:
    from tempo_agents.agent.agent import Agent

__all__ = ["SortedCalls", "invalid_arguments_message", "parse_args", "sort_calls", "tool_not_found_message"]


def tool_not_found_message(tool_name: str, available: list[str]) -> str:
    available_text = f" Available tools: {', '.join(available)}." if available else ""
    return (
        f'Tool "{tool_name}" not found.{available_text}'
        " Call tools by their exact name only — never add prefixes, namespaces, or colons."
    )


def invalid_arguments_message(tool_name: str) -> str:
    return (
        f'Tool "{tool_name}" received invalid arguments — the provided JSON could not be parsed. '
        "Please provide valid JSON arguments."
    )


def parse_args(args_text: str) -> tuple[bool, Any]:
    """Whether a call's arguments text is JSON, and its value (``{}`` for no text)."""
    if not args_text.strip():
        return True, {}
    try:
        return True, json.loads(args_text)
    except ValueError:
        return False, None


@dataclass
class SortedCalls:
    """The calls of one answer: their parts of the assistant message, their chunks, the calls to run and the
    tool errors already answered."""

    parts: list[ToolCallPart] = field(default_factory=list)
    """The calls as the run's transcript holds them."""
    kept_parts: list[ToolCallPart] = field(default_factory=list)
    """The calls as the thread's memory keeps them (the transcript transform's arguments)."""
    runnable: list[ToolCallRequest] = field(default_factory=list)
    chunk_writes: list[ChunkWrite] = field(default_factory=list)
    """A ``tool-call`` chunk per call, and a ``tool-error`` after each answered one."""
    error_entries: list[TranscriptEntry] = field(default_factory=list)
    """The tool messages of the answered calls."""


async def sort_calls(
    agent: Agent, journal: RunJournal, step_input: ModelStepInput, calls: list[ToolCallEvent]
) -> SortedCalls:
    """Journal each call and sort it: to run, or answered with its tool error."""
    available = agent.active_tool_names(step_input.options.active_tools, step_input.mode)
    sorting = _Sorting(agent, journal, step_input.step, available)
    for index, call in enumerate(calls):
        await sorting.add(index, call)
    return sorting.calls


class _Sorting:
    """Adds the calls of one answer to their :class:`SortedCalls`, one at a time."""

    def __init__(self, agent: Agent, journal: RunJournal, step: int, available: list[str]) -> None:
        self._agent = agent
        self._journal = journal
        self._step = step
        self._available = available
        self.calls = SortedCalls()

    async def add(self, index: int, call: ToolCallEvent) -> None:
        parsed, args = parse_args(call.args_text)
        tool = self._agent.tools.get(call.tool_name)
        call_payload = await self._journal_call(call, args, tool)
        error = self._refusal(call.tool_name, parsed)
        if error is None:
            self.calls.runnable.append(
                ToolCallRequest(
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    args=args,
                    index=index,
                    operation=tool.workflow_operation if tool is not None else None,
                    activity=tool.activity if tool is not None else None,
                )
            )
            return
        self.calls.chunk_writes.append(
            ChunkWrite(
                self._journal.chunk("tool-error", {**call_payload, "error": error}),
                keys.call_outcome(self._step, call.tool_call_id, "tool-error"),
            )
        )
        result = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=error, is_error=True)
        self.calls.error_entries.append(
            TranscriptEntry(
                self._step, f"tool-{index:04d}", 1 + index, Message(role="tool", content=[result]).to_wire()
            )
        )

    async def _journal_call(self, call: ToolCallEvent, args: Any, tool: Tool | None) -> dict[str, Any]:
        """The call's parts of the assistant message and its ``tool-call`` chunk; the chunk's payload."""
        self.calls.parts.append(ToolCallPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, args=args))
        transform = self._agent.transform_for(call.tool_name) if tool is not None else None
        ids = {"tool_name": call.tool_name, "tool_call_id": call.tool_call_id}
        shown = await project(transform, "display", "input", args, input=args, **ids)
        kept = await project(transform, "transcript", "input", args, input=args, **ids)
        self.calls.kept_parts.append(ToolCallPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, args=kept))
        call_payload = {"toolCallId": call.tool_call_id, "toolName": call.tool_name, "args": shown}
        self.calls.chunk_writes.append(
            ChunkWrite(self._journal.chunk("tool-call", call_payload), keys.tool_call(self._step, call.tool_call_id))
        )
        return call_payload

    def _refusal(self, tool_name: str, parsed: bool) -> str | None:
        """The tool error of a call the step answers at once, else ``None`` (the call runs)."""
        if tool_name not in self._available:
            return tool_not_found_message(tool_name, self._available)
        if not parsed:
            return invalid_arguments_message(tool_name)
        return None
