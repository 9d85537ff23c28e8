"""The four operations on a run's task list, named as the model sees their tools.

The workflow runs a call under one of these names as a task-list operation, with no activity
(ARCHITECTURE.md, "The path of a run").
"""

from __future__ import annotations

__all__ = ["TASK_CHECK", "TASK_COMPLETE", "TASK_TOOL_NAMES", "TASK_UPDATE", "TASK_WRITE", "known_task_tool"]

TASK_WRITE = "task_write"
TASK_UPDATE = "task_update"
TASK_COMPLETE = "task_complete"
TASK_CHECK = "task_check"
TASK_TOOL_NAMES = (TASK_WRITE, TASK_UPDATE, TASK_COMPLETE, TASK_CHECK)
"""The four tool ids, which are also the names the model sees them under."""


def known_task_tool(tool_name: str) -> str:
    """``tool_name`` itself when it names a task-list operation; anything else is a programming error."""
    if tool_name not in TASK_TOOL_NAMES:
        raise ValueError(f"Not a task tool: {tool_name!r}")
    return tool_name
