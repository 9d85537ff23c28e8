"""A task of a run's task list, its status, and where a thread keeps its list.

These are run state: the workflow holds and carries them across continue-as-new, the model step reads the thread's
list from the store, the HTTP API shows them. Pure data, safe in workflow code.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from tempo_agents._wire import WireModel

__all__ = ["TASKS_REQUEST_CONTEXT_KEY", "TASKS_STATE_TYPE", "TaskItem", "TaskStatus"]

TASKS_STATE_TYPE = "task"
"""The thread-state type under which a thread's task list is stored."""

TASKS_REQUEST_CONTEXT_KEY = "mastra:tasks"
"""The request-context key holding the list written during the current turn (reference name kept)."""

TaskStatus: TypeAlias = Literal["pending", "in_progress", "completed"]


class TaskItem(WireModel):
    """A stored task: always has an id. On the wire ``active_form`` is ``activeForm``."""

    id: str
    content: str
    status: TaskStatus
    active_form: str
