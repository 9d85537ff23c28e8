"""The task tools (``task_write`` and the others of :data:`TASK_TOOLS`) as Tool objects: their descriptions, their
input schemas and what they answer when called directly.

Inside a run they never reach an activity: the workflow validates the call and changes the task
list (``tempo_agents.tasks``), which is workflow state (queryable as ``tasks``). Called directly there is no
memory thread, so they answer with the reference's no-memory result.
"""

from __future__ import annotations

from typing import Any

from tempo_agents.tasks import (
    TASK_CHECK,
    TASK_COMPLETE,
    TASK_TOOL_INPUT_MODELS,
    TASK_UPDATE,
    TASK_WRITE,
    input_json_schema,
    no_memory_result,
)
from tempo_agents.tools.tool import Tool, create_tool

__all__ = [
    "TASK_CHECK_DESCRIPTION",
    "TASK_COMPLETE_DESCRIPTION",
    "TASK_TOOLS",
    "TASK_TOOL_DESCRIPTIONS",
    "TASK_UPDATE_DESCRIPTION",
    "TASK_WRITE_DESCRIPTION",
    "task_check_tool",
    "task_complete_tool",
    "task_update_tool",
    "task_write_tool",
]

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


def _task_tool(name: str) -> Tool:
    async def execute(data: Any) -> dict[str, Any]:
        return no_memory_result(name)

    tool = create_tool(
        id=name, description=TASK_TOOL_DESCRIPTIONS[name], input_schema=TASK_TOOL_INPUT_MODELS[name], execute=execute
    )
    tool.workflow_operation = name
    tool.set_model_input_schema(input_json_schema(name))

    return tool


task_write_tool = _task_tool(TASK_WRITE)
task_update_tool = _task_tool(TASK_UPDATE)
task_complete_tool = _task_tool(TASK_COMPLETE)
task_check_tool = _task_tool(TASK_CHECK)

TASK_TOOLS: dict[str, Tool] = {
    TASK_WRITE: task_write_tool,
    TASK_UPDATE: task_update_tool,
    TASK_COMPLETE: task_complete_tool,
    TASK_CHECK: task_check_tool,
}
