"""Conversation messages: what a model is sent and what the transcript stores."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field, TypeAdapter

from tempo_agents._wire import WireModel

__all__ = ["Message", "MessageInput", "Part", "TextPart", "ToolCallPart", "ToolResultPart", "normalize_messages"]


class TextPart(WireModel):
    """Plain text inside a message."""

    type: Literal["text"] = "text"
    text: str


class ToolCallPart(WireModel):
    """An assistant's request to call a tool."""

    type: Literal["tool-call"] = "tool-call"
    tool_call_id: str
    tool_name: str
    args: Any = None


class ToolResultPart(WireModel):
    """What a tool call returned, in the form the model sees it."""

    type: Literal["tool-result"] = "tool-result"
    tool_call_id: str
    tool_name: str
    result: Any = None
    is_error: bool = False


Part: TypeAlias = Annotated[TextPart | ToolCallPart | ToolResultPart, Field(discriminator="type")]


class Message(WireModel):
    """One message of a conversation: ``system``, ``user``, ``assistant`` or ``tool``."""

    role: Literal["system", "user", "assistant", "tool"]
    content: list[Part]

    @property
    def text(self) -> str:
        """The concatenated text parts."""
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool-call parts."""
        return [part for part in self.content if isinstance(part, ToolCallPart)]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        """The tool-result parts."""
        return [part for part in self.content if isinstance(part, ToolResultPart)]


MessageInput: TypeAlias = str | Message | dict[str, Any] | Sequence[str | Message | dict[str, Any]]
"""What ``stream()`` and ``generate()`` accept: a prompt, a message, a ``{role, content}`` dict, or a list."""

_message_adapter: TypeAdapter[Message] = TypeAdapter(Message)


def normalize_messages(messages: MessageInput) -> list[Message]:
    """Turn any accepted message input into a list of :class:`Message`.

    A bare string is a user message; a dict's ``content`` may be a string or a list of parts.
    """
    items: Iterable[str | Message | dict[str, Any]]
    items = [messages] if isinstance(messages, (str, Message, dict)) else messages
    result: list[Message] = []
    for item in items:
        if isinstance(item, Message):
            result.append(item)
        elif isinstance(item, str):
            result.append(Message(role="user", content=[TextPart(text=item)]))
        elif isinstance(item, dict):
            content = item.get("content", "")
            if isinstance(content, str):
                item = {**item, "content": [{"type": "text", "text": content}]}
            result.append(_message_adapter.validate_python(item))
        else:
            raise TypeError(f"cannot use {type(item).__name__} as a message; pass a str, a dict or a Message")
    return result
