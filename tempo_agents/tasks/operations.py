"""The operations on a run's task list: ``task_write``, ``task_update``, ``task_complete`` and ``task_check``.

The task list is workflow state: the workflow validates a task tool's call (``tempo_agents.tasks.inputs``) and
changes the list here, with no activity. Everything here is therefore pure: no I/O, no clock, no randomness, and
only the standard library, pydantic and the task modules are imported, so the module is safe in workflow code.

An operation takes the current list and the validated input and returns a :class:`TaskMutation`: the exact
JSON-ready tool result and the new list to persist (``None`` when nothing is persisted).

Decisions where the reference is silent:

* An unknown or empty id gives the ``Task not found`` result. The first task with a matching id is the one changed.
* ``demote_extra_in_progress`` keeps the preferred task only if it is itself ``in_progress``; otherwise the last
  ``in_progress`` task is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tempo_agents.tasks.inputs import TaskIdInput, TaskUpdateInput, TaskWriteInput
from tempo_agents.tasks.items import TaskItem, TaskStatus
from tempo_agents.tasks.operation_names import TASK_CHECK, TASK_COMPLETE, TASK_UPDATE, TASK_WRITE, known_task_tool
from tempo_agents.tasks.task_ids import assign_task_ids

__all__ = [
    "NO_MEMORY_MESSAGE",
    "NO_TASKS_FOUND",
    "NO_TASKS_TRACKED",
    "ONLY_ONE_IN_PROGRESS",
    "TaskMutation",
    "check_tasks",
    "complete_task",
    "demote_extra_in_progress",
    "failure_result",
    "format_task_list_result",
    "no_memory_result",
    "update_task",
    "write_tasks",
]

NO_MEMORY_MESSAGE = (
    "Task tools require agent memory (a memory-backed thread). No task was recorded. "
    "Configure the agent with Memory to use the task list."
)
"""The result text of every task tool when the run is not memory-backed."""

ONLY_ONE_IN_PROGRESS = "Only one task can be in_progress at a time."
NO_TASKS_TRACKED = "No tasks are currently tracked."
NO_TASKS_FOUND = "No tasks found. Consider using task_write to create a task list for complex work."

_FAILURE_PREFIXES = {
    TASK_WRITE: "Failed to update tasks",
    TASK_UPDATE: "Failed to update task",
    TASK_COMPLETE: "Failed to complete task",
    TASK_CHECK: "Failed to check tasks",
}


@dataclass(frozen=True)
class TaskMutation:
    """What a task tool produced: the JSON-ready tool result and the list to persist (``None``: persist nothing)."""

    result: dict[str, Any]
    tasks: list[TaskItem] | None


# --------------------------------------------------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------------------------------------------------


def write_tasks(current: list[TaskItem], data: TaskWriteInput) -> TaskMutation:
    """``task_write``: replace the whole list; more than one ``in_progress`` is an error that persists nothing."""
    tasks = assign_task_ids(data.tasks, current)
    if _count(tasks, "in_progress") > 1:
        return TaskMutation(_tool_result(ONLY_ONE_IN_PROGRESS, current, is_error=True), None)
    return _persisted(tasks)


def update_task(current: list[TaskItem], data: TaskUpdateInput) -> TaskMutation:
    """``task_update``: patch the given fields of one task, demoting any other ``in_progress`` task."""
    index = _find(current, data.id)
    if index is None:
        return _not_found(current, data.id)
    tasks = list(current)
    tasks[index] = tasks[index].model_copy(update=data.changes())
    return _persisted(demote_extra_in_progress(tasks, index))


def complete_task(current: list[TaskItem], data: TaskIdInput) -> TaskMutation:
    """``task_complete``: mark one task completed, keeping the order."""
    index = _find(current, data.id)
    if index is None:
        return _not_found(current, data.id)
    tasks = list(current)
    tasks[index] = tasks[index].model_copy(update={"status": "completed"})
    return _persisted(tasks)


def demote_extra_in_progress(tasks: list[TaskItem], preferred_index: int | None = None) -> list[TaskItem]:
    """Leave at most one ``in_progress`` task: the preferred one if it is in progress, else the last; others pend."""
    in_progress = [index for index, task in enumerate(tasks) if task.status == "in_progress"]
    if len(in_progress) <= 1:
        return list(tasks)
    keep = preferred_index if preferred_index in in_progress else in_progress[-1]
    return [
        task.model_copy(update={"status": "pending"}) if index in in_progress and index != keep else task
        for index, task in enumerate(tasks)
    ]


def check_tasks(current: list[TaskItem]) -> dict[str, Any]:
    """``task_check``: the status text, the list, the summary and the incomplete tasks (in progress first)."""
    summary = _summary(current)
    incomplete = _with_status(current, "in_progress") + _with_status(current, "pending")
    return {
        **_tool_result(_check_text(current, summary), current, is_error=False),
        "summary": summary,
        "incompleteTasks": _dump(incomplete),
    }


def no_memory_result(tool_name: str) -> dict[str, Any]:
    """The result of ``tool_name`` when the run is not memory-backed (``task_check`` adds an empty summary)."""
    return _error_without_tasks(tool_name, NO_MEMORY_MESSAGE)


def failure_result(tool_name: str, message: str | None) -> dict[str, Any]:
    """The catch-all result of ``tool_name`` for an unexpected error (``message`` None → ``Unknown error``)."""
    prefix = _FAILURE_PREFIXES[known_task_tool(tool_name)]
    return _error_without_tasks(tool_name, f"{prefix}: {message or 'Unknown error'}")


# --------------------------------------------------------------------------------------------------------------------
# Text formats
# --------------------------------------------------------------------------------------------------------------------


def format_task_list_result(tasks: list[TaskItem]) -> str:
    """The success text of the mutating tools: counts, the task in progress and one line per task."""
    lines = [f"Tasks updated: [{_count(tasks, 'completed')}/{len(tasks)} completed]"]
    in_progress = _with_status(tasks, "in_progress")
    if in_progress:
        lines.append(f"Currently: {in_progress[0].active_form} ({in_progress[0].id})")
    if tasks:
        lines.append("Task IDs:")
        lines.extend(_task_line(task) for task in tasks)
    return "\n".join(lines)


def _check_text(tasks: list[TaskItem], summary: dict[str, Any]) -> str:
    if not tasks:
        return NO_TASKS_FOUND
    text = (
        f"Task Status: [{summary['completed']}/{summary['total']} completed]\n"
        f"- Completed: {summary['completed']}\n"
        f"- In Progress: {summary['inProgress']}\n"
        f"- Pending: {summary['pending']}\n"
        "\n"
        f"All tasks completed: {'YES' if summary['allCompleted'] else 'NO'}"
    )
    if summary["allCompleted"]:
        return text
    text += "\n\nIncomplete tasks:"
    text += _check_section("In Progress", _with_status(tasks, "in_progress"))
    text += _check_section("Pending", _with_status(tasks, "pending"))
    return text + "\n\nContinue working on these tasks before ending."


def _check_section(title: str, tasks: list[TaskItem]) -> str:
    if not tasks:
        return ""
    return f"\n\n{title}:" + "".join(f"\n- {task.id}: {task.content}" for task in tasks)


def _not_found(current: list[TaskItem], task_id: str) -> TaskMutation:
    if current:
        available = "Available task IDs:\n" + "\n".join(_task_line(task) for task in current)
    else:
        available = NO_TASKS_TRACKED
    return TaskMutation(_tool_result(f"Task not found: {task_id}\n\n{available}", current, is_error=True), None)


def _task_line(task: TaskItem) -> str:
    return f"- {task.id}: {task.content} ({task.status})"


# --------------------------------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------------------------------


def _summary(tasks: list[TaskItem]) -> dict[str, Any]:
    total = len(tasks)
    completed = _count(tasks, "completed")
    incomplete = total - completed
    return {
        "total": total,
        "completed": completed,
        "inProgress": _count(tasks, "in_progress"),
        "pending": _count(tasks, "pending"),
        "incomplete": incomplete,
        "hasTasks": total > 0,
        "allCompleted": total > 0 and incomplete == 0,
    }


def _persisted(tasks: list[TaskItem]) -> TaskMutation:
    return TaskMutation(_tool_result(format_task_list_result(tasks), tasks, is_error=False), tasks)


def _tool_result(content: str, tasks: list[TaskItem], *, is_error: bool) -> dict[str, Any]:
    return {"content": content, "tasks": _dump(tasks), "isError": is_error}


def _error_without_tasks(tool_name: str, content: str) -> dict[str, Any]:
    result = _tool_result(content, [], is_error=True)
    if known_task_tool(tool_name) == TASK_CHECK:
        result["summary"] = _summary([])
        result["incompleteTasks"] = []
    return result


def _dump(tasks: list[TaskItem]) -> list[dict[str, Any]]:
    return [task.model_dump(mode="json", by_alias=True) for task in tasks]


def _find(tasks: list[TaskItem], task_id: str) -> int | None:
    return next((index for index, task in enumerate(tasks) if task.id == task_id), None)


def _count(tasks: list[TaskItem], status: TaskStatus) -> int:
    return len(_with_status(tasks, status))


def _with_status(tasks: list[TaskItem], status: TaskStatus) -> list[TaskItem]:
    return [task for task in tasks if task.status == status]
