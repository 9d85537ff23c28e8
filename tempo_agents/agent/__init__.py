"""Agent definitions: the :class:`Agent`, its hooks, modes and delegation; what the worker looks up to run one.

The client (:class:`tempo_agents.App`) lives in ``tempo_agents.client``; this package imports none of it.
"""

from tempo_agents.agent.agent import Agent
from tempo_agents.agent.hooks import ToolCallHookContext, ToolHooks
from tempo_agents.agent.modes import AgentMode

__all__ = ["Agent", "AgentMode", "ToolCallHookContext", "ToolHooks"]
