"""How a run's workflow is started: the settings that follow from the agent (ARCHITECTURE.md, "Local activities")."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Protocol

from tempo_agents.activity_options import LOCAL_TASK_TIMEOUT, ActivityOptions
from tempo_agents.tools.tool import Tool

__all__ = ["ActivitySettings", "uses_local_activities", "workflow_task_timeout"]


class ActivitySettings(Protocol):
    """What an agent's activity options are read from (an :class:`~tempo_agents.agent.agent.Agent`)."""

    @property
    def model_step_activity(self) -> ActivityOptions | None: ...

    @property
    def tools(self) -> Mapping[str, Tool]: ...


def uses_local_activities(agent: ActivitySettings) -> bool:
    """Whether the agent's model steps or any of its tools run as local activities."""
    if agent.model_step_activity is not None and agent.model_step_activity.local:
        return True
    return any(tool.activity is not None and tool.activity.local for tool in agent.tools.values())


def workflow_task_timeout(agent: ActivitySettings) -> timedelta | None:
    """The run's workflow task timeout: short for agents with local activities, so a worker lost in the middle
    of one is noticed within seconds; Temporal's default otherwise."""
    return LOCAL_TASK_TIMEOUT if uses_local_activities(agent) else None
