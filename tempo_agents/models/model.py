"""The model protocol: what the model-step activity needs from any model provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import Field

from tempo_agents._wire import WireModel
from tempo_agents.models.messages import Message
from tempo_agents.models.usage import Usage

__all__ = [
    "FinishEvent",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "TextDelta",
    "ToolCallEvent",
    "ToolChoice",
    "ToolChoiceTool",
    "ToolDefinition",
    "ToolInputDelta",
    "ToolInputEnd",
    "ToolInputStart",
    "ToolResultEvent",
]


class ToolDefinition(WireModel):
    """A tool as the model is offered it: model-visible name, description, JSON schema of its input.

    ``kind="web_search"`` marks the built-in web search: the adapter replaces it with the provider's
    native, provider-executed search tool (and raises ``WEB_SEARCH_UNSUPPORTED_PROVIDER`` when the
    provider has none).
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    kind: Literal["function", "web_search"] = "function"


class ToolChoiceTool(WireModel):
    """Force one named tool: ``{"type": "tool", "toolName": ...}``."""

    type: Literal["tool"] = "tool"
    tool_name: str


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | ToolChoiceTool


class ModelRequest(WireModel):
    """Everything one model step sends to the model."""

    run_id: str
    step: int
    messages: list[Message]
    tools: list[ToolDefinition] = Field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    settings: dict[str, Any] = Field(default_factory=dict)


class TextDelta(WireModel):
    """A piece of assistant text."""

    kind: Literal["text-delta"] = "text-delta"
    text: str


class ToolInputStart(WireModel):
    """The model began streaming a tool call's arguments."""

    kind: Literal["tool-input-start"] = "tool-input-start"
    tool_call_id: str
    tool_name: str


class ToolInputDelta(WireModel):
    """A raw JSON fragment of a tool call's arguments."""

    kind: Literal["tool-input-delta"] = "tool-input-delta"
    tool_call_id: str
    args_text_delta: str


class ToolInputEnd(WireModel):
    """A tool call's arguments are complete."""

    kind: Literal["tool-input-end"] = "tool-input-end"
    tool_call_id: str


class ToolCallEvent(WireModel):
    """A complete tool call; ``args_text`` is the raw JSON text the model produced.

    ``provider_executed`` calls (native web search) were run by the provider: they are journaled,
    not executed, and their result arrives as a :class:`ToolResultEvent`.
    """

    kind: Literal["tool-call"] = "tool-call"
    tool_call_id: str
    tool_name: str
    args_text: str
    provider_executed: bool = False


class ToolResultEvent(WireModel):
    """The result of a provider-executed tool call."""

    kind: Literal["tool-result"] = "tool-result"
    tool_call_id: str
    tool_name: str
    result: Any = None
    provider_executed: bool = True


class FinishEvent(WireModel):
    """The model finished this step."""

    kind: Literal["finish"] = "finish"
    finish_reason: str
    usage: Usage = Field(default_factory=Usage)
    cached_input_tokens: int = 0
    """How many of ``usage.input_tokens`` the provider read from its prompt cache (priced lower)."""


ModelEvent: TypeAlias = (
    TextDelta | ToolInputStart | ToolInputDelta | ToolInputEnd | ToolCallEvent | ToolResultEvent | FinishEvent
)


@runtime_checkable
class Model(Protocol):
    """A model provider. ``stream`` yields events and ends with exactly one :class:`FinishEvent`."""

    @property
    def provider(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...
