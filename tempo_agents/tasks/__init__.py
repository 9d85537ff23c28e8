"""A run's task list: its tasks, the operations the task tools run on it, and what the model is shown of it.

The list is run state: the workflow holds it and runs the four operations (``task_write``, ``task_update``,
``task_complete``, ``task_check``) in workflow code, with no activity; the model step reads the thread's list from
the store and shows it as signals; the HTTP API shows it. Everything here is pure data and pure functions, safe in
workflow code: ``items`` (the task types), ``operation_names``, ``inputs`` (what each operation takes, its
validation and the schema the model sees), ``task_ids`` (the ids of a write), ``operations`` (the operations and
their results) and ``signals`` (the snapshots and deltas the model reads). The tools themselves are
``tempo_agents.tools.builtin.task_tools``.
"""

from tempo_agents.tasks.items import TASKS_STATE_TYPE, TaskItem, TaskStatus
from tempo_agents.tasks.signals import TaskSignalState

__all__ = ["TASKS_STATE_TYPE", "TaskItem", "TaskSignalState", "TaskStatus"]
