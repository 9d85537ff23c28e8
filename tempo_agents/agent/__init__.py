"""Agent definitions: the :class:`Agent`, its hooks, modes and delegation; what the worker looks up to run one.

The client (:class:`tempo_agents.App`) lives in ``tempo_agents.client``; this package imports none of it.
"""

from typing import Any

from tempo_agents.agent.agent import Agent
from tempo_agents.agent.hooks import ToolCallHookContext, ToolHooks
from tempo_agents.agent.modes import AgentMode
from tempo_agents.deprecations import moved_name

__all__ = ["Agent", "AgentMode", "ToolCallHookContext", "ToolHooks"]


def __getattr__(name: str) -> Any:
    """A name the previous release had here and that moved: found where it lives now, with a warning."""
    return moved_name(__name__, name)
