"""A run's task list as data: a task, its status, where a thread keeps its list, what the model was shown of it.

These are run state: the workflow holds and carries them across continue-as-new, the model step reads the thread's
list from the store, the HTTP API shows them. The task tools (``tools/builtin/task_list.py``) and the task
signals (``tools/builtin/task_signals.py``) compute with them. Pure data, safe in workflow code.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from tempo_agents._wire import WireModel

__all__ = ["TASKS_STATE_TYPE", "TaskItem", "TaskSignalState", "TaskStatus"]

TASKS_STATE_TYPE = "task"
"""The thread-state type under which a thread's task list is stored."""

TaskStatus: TypeAlias = Literal["pending", "in_progress", "completed"]


class TaskItem(WireModel):
    """A stored task: always has an id. On the wire ``active_form`` is ``activeForm``."""

    id: str
    content: str
    status: TaskStatus
    active_form: str


class TaskSignalState(WireModel):
    """What the model has been shown of the list: the last snapshot, the deltas since, and the list they add up to."""

    snapshot_tasks: list[TaskItem] | None = None
    deltas_since_snapshot: int = 0
    last_tasks: list[TaskItem] = Field(default_factory=list)
