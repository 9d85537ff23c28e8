"""What the model sends to each task-list operation, how it is validated, and the JSON schema it is shown.

Callers validate the raw tool input with the project's validation module against :data:`TASK_TOOL_INPUT_MODELS` and
pass the validated model to the matching operation (``tempo_agents.tasks.operations``). Pure: only the standard
library, pydantic (with its ``pydantic_core``), ``tempo_agents._wire`` and the task types are imported, so the
module is safe in workflow code.

Decisions where the reference is silent:

* ``task_update`` / ``task_complete`` ``id`` has no description and no minimum length (the reference lists none); an
  unknown or empty id gives the ``Task not found`` result.
* An optional field sent as ``null`` counts as not given (the project's validation strips nulls anyway); the schema
  the model sees does not offer ``null``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator
from pydantic_core import PydanticCustomError

from tempo_agents._wire import WireModel
from tempo_agents.tasks.items import TaskStatus
from tempo_agents.tasks.operation_names import TASK_CHECK, TASK_COMPLETE, TASK_UPDATE, TASK_WRITE, known_task_tool

__all__ = [
    "TASK_TOOL_INPUT_MODELS",
    "UPDATE_NEEDS_A_FIELD",
    "TaskCheckInput",
    "TaskIdInput",
    "TaskInput",
    "TaskUpdateInput",
    "TaskWriteInput",
    "input_json_schema",
]

UPDATE_NEEDS_A_FIELD = "Provide at least one field to update."

_ID_DESCRIPTION = "Stable task identifier (for example, 'task_investigate_tests'). Keep this unchanged across updates."
_CONTENT_DESCRIPTION = "Task description in imperative form (e.g., 'Fix authentication bug')"
_ACTIVE_FORM_DESCRIPTION = "Present continuous form shown during execution (e.g., 'Fixing authentication bug')"


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


def _input_model(tool_name: str) -> type[BaseModel]:
    return TASK_TOOL_INPUT_MODELS[known_task_tool(tool_name)]
