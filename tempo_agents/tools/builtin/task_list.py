"""Deprecated alias: the task-list operations' earlier import path. They live in :mod:`tempo_agents.tasks`; the
tools' descriptions in :mod:`tempo_agents.tools.builtin.task_tools`."""

from typing import Any

from tempo_agents.deprecations import moved_name
from tempo_agents.tasks import (
    NO_MEMORY_MESSAGE,
    TASK_CHECK,
    TASK_COMPLETE,
    TASK_TOOL_INPUT_MODELS,
    TASK_TOOL_NAMES,
    TASK_UPDATE,
    TASK_WRITE,
    TASKS_REQUEST_CONTEXT_KEY,
    TASKS_STATE_TYPE,
    TaskCheckInput,
    TaskIdInput,
    TaskInput,
    TaskItem,
    TaskMutation,
    TaskStatus,
    TaskUpdateInput,
    TaskWriteInput,
    assign_task_ids,
    check_tasks,
    complete_task,
    demote_extra_in_progress,
    failure_result,
    format_task_list_result,
    input_json_schema,
    no_memory_result,
    slugify,
    update_task,
    write_tasks,
)
from tempo_agents.tools.builtin.task_tools import (
    TASK_CHECK_DESCRIPTION,
    TASK_COMPLETE_DESCRIPTION,
    TASK_TOOL_DESCRIPTIONS,
    TASK_UPDATE_DESCRIPTION,
    TASK_WRITE_DESCRIPTION,
)

__all__ = [
    "NO_MEMORY_MESSAGE",
    "TASKS_REQUEST_CONTEXT_KEY",
    "TASKS_STATE_TYPE",
    "TASK_CHECK",
    "TASK_CHECK_DESCRIPTION",
    "TASK_COMPLETE",
    "TASK_COMPLETE_DESCRIPTION",
    "TASK_TOOL_DESCRIPTIONS",
    "TASK_TOOL_INPUT_MODELS",
    "TASK_TOOL_NAMES",
    "TASK_UPDATE",
    "TASK_UPDATE_DESCRIPTION",
    "TASK_WRITE",
    "TASK_WRITE_DESCRIPTION",
    "TaskCheckInput",
    "TaskIdInput",
    "TaskInput",
    "TaskItem",
    "TaskMutation",
    "TaskStatus",
    "TaskUpdateInput",
    "TaskWriteInput",
    "assign_task_ids",
    "check_tasks",
    "complete_task",
    "demote_extra_in_progress",
    "failure_result",
    "format_task_list_result",
    "input_json_schema",
    "no_memory_result",
    "slugify",
    "update_task",
    "write_tasks",
]


def __getattr__(name: str) -> Any:
    """A name the previous release had here and that moved: found where it lives now, with a warning."""
    return moved_name(__name__, name)
