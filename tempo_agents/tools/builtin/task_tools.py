"""The task tools (``task_write`` and the others of :data:`TASK_TOOLS`) as Tool objects.

Inside a run they never reach an activity: the workflow validates the call and changes the task
list, which is workflow state (queryable as ``tasks``). Called directly there is no memory thread,
so they answer with the reference's no-memory result.
"""

from __future__ import annotations

from typing import Any

from tempo_agents.tools.builtin.task_list import (
    TASK_CHECK,
    TASK_COMPLETE,
    TASK_TOOL_DESCRIPTIONS,
    TASK_TOOL_INPUT_MODELS,
    TASK_UPDATE,
    TASK_WRITE,
    input_json_schema,
    no_memory_result,
)
from tempo_agents.tools.tool import Tool, create_tool


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
