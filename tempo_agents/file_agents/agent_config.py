"""``agent_config(...)``: what a ``config.py`` of a file-based agent sets ``config`` to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, TypedDict, Unpack

from tempo_agents.activity_options import ActivityOptions
from tempo_agents.agent.agent import Agent, Instructions
from tempo_agents.agent.hooks import ToolHooks
from tempo_agents.agent.modes import AgentMode
from tempo_agents.models.model import Model
from tempo_agents.signals import TaskSignalProvider
from tempo_agents.tools.tool import Tool
from tempo_agents.tools.transform import ToolTransform

__all__ = ["AgentConfig", "agent_config"]


class AgentConfig(TypedDict, total=False):
    """The keyword arguments of :class:`~tempo_agents.Agent`, every one optional: ``id`` and ``name`` default to
    the directory's name, ``instructions`` may come from ``instructions.md``, ``tools`` and ``agents`` are merged
    with the ``tools/`` and ``subagents/`` folders (these win), ``model`` may come from ``App.from_directory``'s
    ``default_model``."""

    id: str
    name: str
    model: Model | str
    instructions: Instructions
    description: str
    tools: Mapping[str, Tool]
    agents: Mapping[str, Agent]
    workflows: Mapping[str, Any]
    hooks: ToolHooks | Mapping[str, Any]
    default_options: Mapping[str, Any]
    suspend_expires_in: timedelta
    modes: Sequence[AgentMode]
    default_mode: str
    signals: Sequence[TaskSignalProvider]
    transform: ToolTransform | Mapping[str, Any]
    model_step_activity: ActivityOptions


def agent_config(**config: Unpack[AgentConfig]) -> AgentConfig:
    """Returns its arguments: a typed way to write a file-based agent's ``config`` (``config = agent_config(...)``)."""
    return config
