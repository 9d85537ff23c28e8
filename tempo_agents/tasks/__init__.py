"""A run's task list: its tasks, the operations the task tools run on it, and what the model is shown of it.

The list is run state: the workflow holds it and runs the four operations (``task_write``, ``task_update``,
``task_complete``, ``task_check``) in workflow code, with no activity; the model step reads the thread's list from
the store and shows it as signals; the HTTP API shows it. Everything here is pure data and pure functions, safe in
workflow code: ``items`` (the task types), ``operation_names``, ``inputs`` (what each operation takes, its
validation and the schema the model sees), ``task_ids`` (the ids of a write), ``operations`` (the operations and
their results) and ``signals`` (the snapshots and deltas the model reads). The tools themselves are
``tempo_agents.tools.builtin.task_tools``.
"""

from tempo_agents.tasks.inputs import (
    TASK_TOOL_INPUT_MODELS,
    TaskCheckInput,
    TaskIdInput,
    TaskInput,
    TaskUpdateInput,
    TaskWriteInput,
    input_json_schema,
)
from tempo_agents.tasks.items import TASKS_REQUEST_CONTEXT_KEY, TASKS_STATE_TYPE, TaskItem, TaskStatus
from tempo_agents.tasks.operation_names import TASK_CHECK, TASK_COMPLETE, TASK_TOOL_NAMES, TASK_UPDATE, TASK_WRITE
from tempo_agents.tasks.operations import (
    NO_MEMORY_MESSAGE,
    TaskMutation,
    check_tasks,
    complete_task,
    demote_extra_in_progress,
    failure_result,
    format_task_list_result,
    no_memory_result,
    update_task,
    write_tasks,
)
from tempo_agents.tasks.signals import (
    MAX_DELTAS_PER_SNAPSHOT,
    TASK_STATE_PROCESSOR_ID,
    TASK_STATE_SYSTEM_MESSAGE,
    TASKS_STATE_ID,
    TaskSignal,
    TaskSignalState,
    compute_task_signal,
    task_list_fingerprint,
)
from tempo_agents.tasks.task_ids import assign_task_ids, slugify

__all__ = [
    "MAX_DELTAS_PER_SNAPSHOT",
    "NO_MEMORY_MESSAGE",
    "TASKS_REQUEST_CONTEXT_KEY",
    "TASKS_STATE_ID",
    "TASKS_STATE_TYPE",
    "TASK_CHECK",
    "TASK_COMPLETE",
    "TASK_STATE_PROCESSOR_ID",
    "TASK_STATE_SYSTEM_MESSAGE",
    "TASK_TOOL_INPUT_MODELS",
    "TASK_TOOL_NAMES",
    "TASK_UPDATE",
    "TASK_WRITE",
    "TaskCheckInput",
    "TaskIdInput",
    "TaskInput",
    "TaskItem",
    "TaskMutation",
    "TaskSignal",
    "TaskSignalState",
    "TaskStatus",
    "TaskUpdateInput",
    "TaskWriteInput",
    "assign_task_ids",
    "check_tasks",
    "complete_task",
    "compute_task_signal",
    "demote_extra_in_progress",
    "failure_result",
    "format_task_list_result",
    "input_json_schema",
    "no_memory_result",
    "slugify",
    "task_list_fingerprint",
    "update_task",
    "write_tasks",
]
