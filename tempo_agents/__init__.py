"""tempo-agents: typed tools and durable agent runs, every run a Temporal workflow."""

from tempo_agents.agent import Agent, AgentStream, App, GenerateResult, ToolCallHookContext, ToolHooks
from tempo_agents.models import ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage
from tempo_agents.tools import Tool, ToolContext, create_tool
from tempo_agents.worker import TempoAgentsPlugin

__all__ = [
    "Agent",
    "AgentStream",
    "App",
    "GenerateResult",
    "ScriptedModel",
    "ScriptedResponse",
    "ScriptedToolCall",
    "TempoAgentsPlugin",
    "Tool",
    "ToolCallHookContext",
    "ToolContext",
    "ToolHooks",
    "Usage",
    "create_tool",
]
