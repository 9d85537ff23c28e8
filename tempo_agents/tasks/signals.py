"""Projecting the task list into the model's context: the state-signal lane for tasks.

Before a model call, :func:`compute_task_signal` compares the current task list with what the model has already
been shown and returns at most one signal: a full **snapshot** (``<current-task-list count="N">``) or a **delta**
(``<task-list-update changes="N">``). It is pure and deterministic (standard library, pydantic,
``tempo_agents._wire`` and the task types only), so it can run inside the Temporal workflow sandbox; its state is a
plain :class:`TaskSignalState` the workflow keeps and carries across continue-as-new.

Decisions where the reference does not pin the behaviour down:

* Snapshot and delta contents put a newline before every line and one final newline before the closing tag.
* Delta lines use two spaces of indentation, like snapshot lines; ``remove`` uses U+2212 MINUS SIGN.
* Delta ops come in this order: adds and updates in the order of the current list, then removes in the order of the
  previous list. A task is "updated" when any of its four fields changed; a pure reordering is no change.
* Every signal (delta too) carries a cache key: the fingerprint of the list after the change. A fingerprint joins,
  per task, ``len:value`` for id, content, status and activeForm (lengths in code points); tasks are joined by ``|``.
* A snapshot is emitted when there is no base snapshot or when 10 or more deltas were emitted since it. To force a
  snapshot (e.g. the context window lost the previous one), pass ``state=None``.
* Tag contents are not escaped (task text is shown as written); attribute values are XML-escaped.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tempo_agents._wire import WireModel
from tempo_agents.tasks.items import TaskItem, TaskStatus

__all__ = [
    "MAX_DELTAS_PER_SNAPSHOT",
    "TASKS_STATE_ID",
    "TASK_STATE_PROCESSOR_ID",
    "TASK_STATE_SYSTEM_MESSAGE",
    "TaskSignal",
    "TaskSignalState",
    "compute_task_signal",
    "task_list_fingerprint",
]

TASKS_STATE_ID = "tasks"
"""The id of the task signal: a snapshot supersedes earlier signals with this id."""

TASK_STATE_PROCESSOR_ID = "task-state"
"""The id of the input processor that projects the task list."""

MAX_DELTAS_PER_SNAPSHOT = 10
"""After this many deltas since the last snapshot, the next change is sent as a fresh snapshot."""

TASK_STATE_SYSTEM_MESSAGE = (
    "Task list state may appear in the conversation as <current-task-list ...>...</current-task-list> snapshots and "
    "<task-list-update ...>...</task-list-update> deltas. These are automatic observations of your task list, not "
    "user instructions. Use them as the latest task state, continue following the actual user request, and do not "
    "treat task-list updates as the user asking you to repeat, summarize, or change tasks unless an actual user "
    "message asks for that."
)
"""The system message added to the model input whenever task signals are in use."""

SNAPSHOT_TAG = "current-task-list"
DELTA_TAG = "task-list-update"

_ICONS: dict[TaskStatus, str] = {"completed": "✓", "in_progress": "▸", "pending": "○"}
_MINUS = "\u2212"  # the remove marker: MINUS SIGN, not a hyphen


class TaskSignalState(WireModel):
    """What the model has been shown of the list: the last snapshot, the deltas since, and the list they add up to."""

    snapshot_tasks: list[TaskItem] | None = None
    deltas_since_snapshot: int = 0
    last_tasks: list[TaskItem] = Field(default_factory=list)


class TaskSignal(WireModel):
    """One synthetic context message about the task list, rendered as an XML-like tag."""

    id: str = TASKS_STATE_ID
    mode: Literal["snapshot", "delta"]
    tag_name: str
    contents: str
    attributes: dict[str, str | int] = Field(default_factory=dict)
    cache_key: str

    def render(self) -> str:
        """The markup the model sees; empty contents give a self-closing tag."""
        opening = self.tag_name + "".join(f' {name}="{_escape(str(value))}"' for name, value in self.attributes.items())
        if not self.contents:
            return f"<{opening} />"
        return f"<{opening}>{self.contents}</{self.tag_name}>"


def compute_task_signal(
    state: TaskSignalState | None, current: list[TaskItem]
) -> tuple[TaskSignal | None, TaskSignalState]:
    """The signal to show for ``current`` (or None) and the state to keep for next time."""
    state = state or TaskSignalState()
    if not current and not state.last_tasks:
        return None, state
    has_snapshot = state.snapshot_tasks is not None
    lines = _delta_lines(state.last_tasks, current)
    if not lines and has_snapshot:
        return None, state
    if not has_snapshot or state.deltas_since_snapshot >= MAX_DELTAS_PER_SNAPSHOT:
        return _snapshot(current), TaskSignalState(snapshot_tasks=list(current), last_tasks=list(current))
    deltas = state.deltas_since_snapshot + 1
    return _delta(lines, current), state.model_copy(
        update={"deltas_since_snapshot": deltas, "last_tasks": list(current)}
    )


def task_list_fingerprint(tasks: list[TaskItem]) -> str:
    """The cache key of a list: ``tasks:`` plus length-prefixed per-task fingerprints joined by ``|``."""
    return "tasks:" + "|".join(_task_fingerprint(task) for task in tasks)


def _snapshot(tasks: list[TaskItem]) -> TaskSignal:
    lines = [f"  {_ICONS[task.status]} [{task.status}] {{id: {task.id}}} {task.content}" for task in tasks]
    return TaskSignal(
        mode="snapshot",
        tag_name=SNAPSHOT_TAG,
        contents=_contents(lines),
        attributes={"count": len(tasks)},
        cache_key=task_list_fingerprint(tasks),
    )


def _delta(lines: list[str], current: list[TaskItem]) -> TaskSignal:
    return TaskSignal(
        mode="delta",
        tag_name=DELTA_TAG,
        contents=_contents(lines),
        attributes={"changes": len(lines)},
        cache_key=task_list_fingerprint(current),
    )


def _delta_lines(previous: list[TaskItem], current: list[TaskItem]) -> list[str]:
    """One line per change: adds and updates in current order, then removes in previous order."""
    before = {task.id: task for task in previous}
    after_ids = {task.id for task in current}
    lines: list[str] = []
    for task in current:
        old = before.get(task.id)
        if old is None:
            lines.append(f"  + {{id: {task.id}}} [{task.status}] {task.content}")
        elif old != task:
            lines.append(f"  {_ICONS[task.status]} {{id: {task.id}}} [{task.status}] {task.content}")
    lines.extend(f"  {_MINUS} removed {{id: {task.id}}}" for task in previous if task.id not in after_ids)
    return lines


def _contents(lines: list[str]) -> str:
    return "".join(f"\n{line}" for line in lines) + "\n" if lines else ""


def _task_fingerprint(task: TaskItem) -> str:
    return "".join(f"{len(value)}:{value}" for value in (task.id, task.content, task.status, task.active_form))


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
