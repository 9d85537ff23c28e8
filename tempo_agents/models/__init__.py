"""The model protocol, messages, usage and ScriptedModel."""

from tempo_agents.models.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tempo_agents.models.model import Model, ModelEvent, ModelRequest, ToolDefinition
from tempo_agents.models.scripted import ScriptedModel, ScriptedResponse, ScriptedToolCall
from tempo_agents.models.usage import Usage

__all__ = [
    "Message",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "ScriptedModel",
    "ScriptedResponse",
    "ScriptedToolCall",
    "TextPart",
    "ToolCallPart",
    "ToolDefinition",
    "ToolResultPart",
    "Usage",
]
