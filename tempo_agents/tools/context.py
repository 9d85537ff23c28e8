"""ToolContext: what a tool's ``execute`` receives next to its validated input."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tempo_agents.models.messages import Message

__all__ = ["DetachedWriter", "ModeSwitch", "SuspendFunction", "ToolContext", "ToolWriter", "check_custom_chunk"]


class ToolWriter(Protocol):
    """Streams a tool's progress into the run: ``tool-output`` and custom ``data-*`` chunks."""

    async def write(self, value: Any) -> None:
        """Emit ``{type: 'tool-output', payload: {output: value, toolCallId, toolName}}``."""
        ...

    async def custom(self, chunk: dict[str, Any]) -> None:
        """Emit a custom chunk as-is; its ``type`` must start with ``data-``."""
        ...


class DetachedWriter:
    """The writer of a tool called outside any run: there is no stream, so chunks are kept here."""

    def __init__(self) -> None:
        self.chunks: list[dict[str, Any]] = []

    async def write(self, value: Any) -> None:
        self.chunks.append({"type": "tool-output", "payload": {"output": value}})

    async def custom(self, chunk: dict[str, Any]) -> None:
        check_custom_chunk(chunk)
        self.chunks.append(dict(chunk))


def check_custom_chunk(chunk: dict[str, Any]) -> None:
    """Refuse a custom chunk whose type does not start with ``data-``."""
    chunk_type = chunk.get("type") if isinstance(chunk, dict) else None
    if not isinstance(chunk_type, str) or not chunk_type.startswith("data-"):
        raise ValueError(f"writer.custom() needs a chunk whose 'type' starts with 'data-', got {chunk_type!r}")


SuspendFunction = Callable[..., Awaitable[None]]


@dataclass
class ToolContext:
    """Everything a tool may use besides its input.

    ``suspend`` is ``None`` when the tool is called outside an agent run (HTTP execute route,
    CLI, plain Python); built-in tools use that to choose their fallback text.
    """

    tool_call_id: str | None = None
    tool_name: str | None = None
    """The name the model called the tool by (its key on the agent)."""
    agent_id: str | None = None

    run_id: str | None = None
    thread_id: str | None = None
    resource_id: str | None = None
    request_context: dict[str, Any] = field(default_factory=dict)
    writer: ToolWriter = field(default_factory=DetachedWriter)
    messages: list[Message] = field(default_factory=list)
    resume_data: Any = None
    suspend_payload: Any = None
    suspend: SuspendFunction | None = None
    expired: bool = False
    """Set when the call is run again because its suspension reached its deadline unanswered."""
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    accepted_input: Any = field(default=None, repr=False)
    """The validated input as JSON, taken before ``execute`` ran (set by the validation pipeline): what a
    resumed call gets back, whatever ``execute`` did to its input object."""
    attempt: int = 1
    """Which attempt at this call this is. A call runs again only when its worker was lost before its
    result was saved (at-least-once); a tool with side effects can use ``(tool_call_id, attempt)`` to
    make them idempotent."""
    mode: str | None = None
    """The agent mode the run is in, for agents that declare modes."""
    mode_switch: ModeSwitch | None = field(default=None, init=False)

    def switch_mode(self, to: str | None = None) -> None:
        """Ask the run to change mode once this call ends: to ``to``, or (``None``) to the current mode's
        ``transitions_to``, else the agent's default mode. Ignored outside a run."""
        self.mode_switch = ModeSwitch(to=to)


@dataclass(frozen=True)
class ModeSwitch:
    """A tool's request to change the run's mode."""

    to: str | None = None
