"""Deprecated alias: the task signals' earlier import path. They live in :mod:`tempo_agents.tasks`."""

from typing import Any

from tempo_agents.deprecations import moved_name
from tempo_agents.tasks import (
    MAX_DELTAS_PER_SNAPSHOT,
    TASK_STATE_PROCESSOR_ID,
    TASK_STATE_SYSTEM_MESSAGE,
    TASKS_STATE_ID,
    TaskSignal,
    TaskSignalState,
    compute_task_signal,
    task_list_fingerprint,
)

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


def __getattr__(name: str) -> Any:
    """A name the previous release had here and that moved: found where it lives now, with a warning."""
    return moved_name(__name__, name)
