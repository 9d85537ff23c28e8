"""Agents, the App registry, hooks, run streams and chunk models."""

from tempo_agents.agent.agent import Agent
from tempo_agents.agent.app import App
from tempo_agents.agent.hooks import ToolCallHookContext, ToolHooks
from tempo_agents.agent.modes import AgentMode
from tempo_agents.agent.partial_args import ToolInputPreview, parse_partial_args
from tempo_agents.agent.stream import AgentStream, GenerateResult

__all__ = [
    "Agent",
    "AgentMode",
    "AgentStream",
    "App",
    "GenerateResult",
    "ToolCallHookContext",
    "ToolHooks",
    "ToolInputPreview",
    "parse_partial_args",
]
