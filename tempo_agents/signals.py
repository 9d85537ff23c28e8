"""Signal providers: bundles of tools plus state projected into the model's input (the state-signal lane)."""

from __future__ import annotations

from dataclasses import dataclass

from tempo_agents.tools.builtin.task_tools import TASK_TOOLS
from tempo_agents.tools.tool import Tool

__all__ = ["TaskSignalProvider"]


@dataclass(frozen=True)
class TaskSignalProvider:
    """The four task tools, and the task list shown to the model as ``<current-task-list>`` snapshots
    and ``<task-list-update>`` deltas. Needs memory (``memory={"thread": ..., "resource": ...}``).

    Merged below the agent's own tools: an agent tool with the same name wins.
    """

    id: str = "task-signals"

    def tools(self) -> dict[str, Tool]:
        return dict(TASK_TOOLS)
