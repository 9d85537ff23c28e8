"""The task list: the pure, deterministic core of ``task_write``, ``task_update``, ``task_complete`` and ``task_check``.

The task list is workflow state: the four task tools change it inside workflow code, with no activity. Everything
here is therefore pure: no I/O, no clock, no randomness, and only the standard library, pydantic (with its
``pydantic_core``), ``tempo_agents._wire`` and ``tempo_agents.tasks`` (the task types) are imported, so the module
is safe inside the Temporal workflow sandbox.

Callers validate the raw tool input with the project's validation module (against the input models below) and
pass the validated model to the matching mutation function. A mutation returns a :class:`TaskMutation`: the exact
JSON-ready tool result and the new list to persist (``None`` when nothing is persisted).

Decisions where the reference is silent:

* Slugs are cut to 48 characters first and trailing ``_`` is stripped afterwards, so a slug never ends in ``_``.
* "The n-th task with the same content" counts every task of the write (with or without an explicit id), in order.
* A previous id is only reused if no earlier task of the same write already took it (possible only when the
  previous list itself held duplicate ids); otherwise the task gets a generated id.
* ``task_update`` / ``task_complete`` ``id`` has no description and no minimum length (the reference lists none); an
  unknown or empty id gives the ``Task not found`` result. The first task with a matching id is the one changed.
* An optional field sent as ``null`` counts as not given (the project's validation strips nulls anyway); the schema
  the model sees does not offer ``null``.
* ``demote_extra_in_progress`` keeps the preferred task only if it is itself ``in_progress``; otherwise the last
  ``in_progress`` task is kept.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, model_validator
from pydantic_core import PydanticCustomError

from tempo_agents._wire import WireModel
from tempo_agents.tasks import TASKS_STATE_TYPE, TaskItem, TaskStatus

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

TASKS_REQUEST_CONTEXT_KEY = "mastra:tasks"
"""The request-context key holding the list written during the current turn (reference name kept)."""

TASK_WRITE = "task_write"
TASK_UPDATE = "task_update"
TASK_COMPLETE = "task_complete"
TASK_CHECK = "task_check"
TASK_TOOL_NAMES = (TASK_WRITE, TASK_UPDATE, TASK_COMPLETE, TASK_CHECK)
"""The four tool ids, which are also the names the model sees them under."""

TASK_WRITE_DESCRIPTION = """\
Create and manage a structured task list for your current coding session. \
This helps you track progress, organize complex tasks, and demonstrate thoroughness to the user.

Usage:
- Use this to create the initial task list or replace the whole list after replanning
- Pass the FULL task list each time this tool is called (replaces the previous list)
- Each task has: id (stable identifier), content (imperative), status (pending, in_progress, or completed), \
activeForm (present continuous)
- IDs must be unique. If duplicate explicit IDs are provided, the duplicate task is returned with a generated \
fallback ID
- Keep task IDs stable across updates. If omitted, IDs are generated and returned in the tool result
- When an ID is omitted while rewriting an existing list, one unambiguous matching task may reuse an existing ID
- Prefer single-task update tools when they are available
- Mark tasks in_progress BEFORE starting work (only ONE at a time)
- Mark tasks completed IMMEDIATELY after finishing
- Use this for multi-step tasks requiring 3+ distinct actions

States:
- pending: Not yet started
- in_progress: Currently working on (limit to ONE)
- completed: Finished successfully"""

TASK_UPDATE_DESCRIPTION = """\
Update one task in the current task list by stable ID. Use this for targeted changes to one existing task.

Usage:
- Provide the task ID returned by the task-list tools
- Include only the fields that changed
- Use status to move a task between pending, in_progress, and completed
- Use task_complete when only marking a task completed
- If the ID is unknown, the tool returns an error with available task IDs"""

TASK_COMPLETE_DESCRIPTION = """\
Mark one task completed by stable ID. Use this when one tracked task is finished.

Usage:
- Provide the task ID returned by the task-list tools
- If the ID is unknown, the tool returns an error with available task IDs"""

TASK_CHECK_DESCRIPTION = """\
Check the completion status of your current task list. \
Use this before finishing tracked work to ensure all tasks are completed.

Returns:
- Human-readable content summary with task counts and incomplete task IDs
- Structured task list snapshot with stable IDs
- summary object with total, completed, inProgress, pending, incomplete, hasTasks, and allCompleted
- incompleteTasks array for tasks that still need work

summary.allCompleted is true only when at least one tracked task exists and every tracked task is completed. \
If no tasks exist, summary.hasTasks is false and summary.allCompleted is false."""

TASK_TOOL_DESCRIPTIONS = {
    TASK_WRITE: TASK_WRITE_DESCRIPTION,
    TASK_UPDATE: TASK_UPDATE_DESCRIPTION,
    TASK_COMPLETE: TASK_COMPLETE_DESCRIPTION,
    TASK_CHECK: TASK_CHECK_DESCRIPTION,
}

NO_MEMORY_MESSAGE = (
    "Task tools require agent memory (a memory-backed thread). No task was recorded. "
    "Configure the agent with Memory to use the task list."
)
"""The result text of every task tool when the run is not memory-backed."""

UPDATE_NEEDS_A_FIELD = "Provide at least one field to update."
ONLY_ONE_IN_PROGRESS = "Only one task can be in_progress at a time."
NO_TASKS_TRACKED = "No tasks are currently tracked."
NO_TASKS_FOUND = "No tasks found. Consider using task_write to create a task list for complex work."

_SLUG_MAX = 48
_FAILURE_PREFIXES = {
    TASK_WRITE: "Failed to update tasks",
    TASK_UPDATE: "Failed to update task",
    TASK_COMPLETE: "Failed to complete task",
    TASK_CHECK: "Failed to check tasks",
}

_ID_DESCRIPTION = "Stable task identifier (for example, 'task_investigate_tests'). Keep this unchanged across updates."
_CONTENT_DESCRIPTION = "Task description in imperative form (e.g., 'Fix authentication bug')"
_ACTIVE_FORM_DESCRIPTION = "Present continuous form shown during execution (e.g., 'Fixing authentication bug')"


# --------------------------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------------------------


class TaskInput(WireModel):
    """One task as the model writes it in ``task_write``: the id is optional."""

    id: str | None = Field(default=None, min_length=1, description=_ID_DESCRIPTION)
    content: str = Field(min_length=1, description=_CONTENT_DESCRIPTION)
    status: TaskStatus = Field(description="Current task status")
    active_form: str = Field(min_length=1, description=_ACTIVE_FORM_DESCRIPTION)


class TaskWriteInput(WireModel):
    """Input of ``task_write``: the full replacement list."""

    tasks: list[TaskInput] = Field(description="The complete updated task list")


class TaskIdInput(WireModel):
    """Input of ``task_complete``: the id of the task to mark completed."""

    id: str


class TaskUpdateInput(WireModel):
    """Input of ``task_update``: the id plus at least one field to change."""

    id: str
    content: str | None = Field(default=None, min_length=1, description="New task description in imperative form")
    status: TaskStatus | None = Field(default=None, description="New task status")
    active_form: str | None = Field(
        default=None, min_length=1, description="New present continuous form shown during execution"
    )

    @model_validator(mode="after")
    def _needs_a_field(self) -> TaskUpdateInput:
        if not self.changes():
            # A custom error keeps the message verbatim (no "Value error, " prefix) at the root path.
            raise PydanticCustomError("task_update_empty", UPDATE_NEEDS_A_FIELD)
        return self

    def changes(self) -> dict[str, Any]:
        """The fields to patch (snake_case names), leaving out those not given."""
        fields = {"content": self.content, "status": self.status, "active_form": self.active_form}
        return {name: value for name, value in fields.items() if value is not None}


class TaskCheckInput(WireModel):
    """Input of ``task_check``: nothing."""


TASK_TOOL_INPUT_MODELS: dict[str, type[BaseModel]] = {
    TASK_WRITE: TaskWriteInput,
    TASK_UPDATE: TaskUpdateInput,
    TASK_COMPLETE: TaskIdInput,
    TASK_CHECK: TaskCheckInput,
}


def input_json_schema(tool_name: str) -> dict[str, Any]:
    """The JSON schema the model sees for ``tool_name``: camelCase names and the field descriptions.

    It is the pydantic schema without the noise pydantic adds: titles, the model docstrings (written for Python
    readers, not for the model), and the ``null`` alternative and ``"default": null`` of optional fields (an
    optional field is simply left out).
    """
    cleaned: dict[str, Any] = _clean_schema(_input_model(tool_name).model_json_schema(by_alias=True))
    return cleaned


def _clean_schema(node: Any, *, property_map: bool = False) -> Any:
    if isinstance(node, list):
        return [_clean_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    if property_map:  # keys are field names, never schema keywords
        return {name: _clean_schema(value) for name, value in node.items()}
    cleaned = {
        key: _clean_schema(value, property_map=key in ("properties", "$defs"))
        for key, value in node.items()
        if key != "title" and not (key == "default" and value is None)
    }
    if "properties" in node:
        cleaned.pop("description", None)
    return _without_null_alternative(cleaned)


def _without_null_alternative(node: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [X, {"type": "null"}], ...}`` → ``{**X, ...}``."""
    alternatives = node.get("anyOf")
    if not isinstance(alternatives, list) or len(alternatives) != 2 or {"type": "null"} not in alternatives:
        return node
    (kept,) = [alternative for alternative in alternatives if alternative != {"type": "null"}]
    rest = {key: value for key, value in node.items() if key != "anyOf"}
    return {**kept, **rest}


@dataclass(frozen=True)
class TaskMutation:
    """What a task tool produced: the JSON-ready tool result and the list to persist (``None``: persist nothing)."""

    result: dict[str, Any]
    tasks: list[TaskItem] | None


# --------------------------------------------------------------------------------------------------------------------
# Id assignment
# --------------------------------------------------------------------------------------------------------------------


def slugify(content: str) -> str:
    """Lowercase ASCII ``a-z0-9`` runs of ``content`` joined by ``_``, at most 48 characters, no edge ``_``."""
    parts: list[str] = []
    current: list[str] = []
    for char in content.lower():
        if "a" <= char <= "z" or "0" <= char <= "9":
            current.append(char)
        elif current:
            parts.append("".join(current))
            current = []
    if current:
        parts.append("".join(current))
    return "_".join(parts)[:_SLUG_MAX].rstrip("_")


def assign_task_ids(tasks: list[TaskInput], previous: list[TaskItem]) -> list[TaskItem]:
    """Give every task of a ``task_write`` a unique id, keeping explicit ids and reusing unambiguous previous ones."""
    explicit = {task.id for task in tasks if task.id is not None}
    reusable = _reusable_previous_ids(tasks, previous, explicit)
    reserved = explicit | set(reusable.values())
    used: set[str] = set()
    seen_content: Counter[str] = Counter()
    assigned: list[TaskItem] = []
    for task in tasks:
        seen_content[task.content] += 1
        task_id = task.id if task.id is not None else reusable.get(task.content)
        if task_id is None or task_id in used:
            task_id = _unique(_generated_id(task.content, seen_content[task.content]), used | reserved)
        used.add(task_id)
        assigned.append(TaskItem(id=task_id, content=task.content, status=task.status, active_form=task.active_form))
    return assigned


def _reusable_previous_ids(tasks: list[TaskInput], previous: list[TaskItem], explicit: set[str]) -> dict[str, str]:
    """Content → previous id, for id-less contents that match exactly one unclaimed previous task."""
    idless = Counter(task.content for task in tasks if task.id is None)
    previous_by_content: dict[str, list[str]] = {}
    for item in previous:
        previous_by_content.setdefault(item.content, []).append(item.id)
    reusable: dict[str, str] = {}
    for content, count in idless.items():
        ids = previous_by_content.get(content, [])
        if count == 1 and len(ids) == 1 and ids[0] not in explicit:
            reusable[content] = ids[0]
    return reusable


def _generated_id(content: str, occurrence: int) -> str:
    base = f"task_{slugify(content) or 'item'}"
    return base if occurrence < 2 else f"{base}_{occurrence}"


def _unique(candidate: str, taken: set[str]) -> str:
    if candidate not in taken:
        return candidate
    suffix = 2
    while f"{candidate}_{suffix}" in taken:
        suffix += 1
    return f"{candidate}_{suffix}"


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
    prefix = _FAILURE_PREFIXES[_known_tool(tool_name)]
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
    if _known_tool(tool_name) == TASK_CHECK:
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


def _known_tool(tool_name: str) -> str:
    if tool_name not in TASK_TOOL_NAMES:
        raise ValueError(f"Not a task tool: {tool_name!r}")
    return tool_name


def _input_model(tool_name: str) -> type[BaseModel]:
    return TASK_TOOL_INPUT_MODELS[_known_tool(tool_name)]
