"""Workflows as tools: the ``workflow-<key>`` tool of any Temporal workflow.

A ``@workflow.defn`` class with typed input and output, or a :class:`WorkflowTool` naming a workflow (written
in any language) with its input and output JSON schemas and the task queue its workers poll. A call runs it
as a child workflow of the agent's run (ARCHITECTURE.md, "Sub-agents and workflows as tools").
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter
from temporalio.workflow import _Definition

from tempo_agents.agent.delegation import ChildTool, child_run_id
from tempo_agents.errors import ConfigurationError
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.tool import Tool
from tempo_agents.workflows.child_payloads import ChildStart

__all__ = ["OPEN_OBJECT", "WorkflowTool", "workflow_tool", "workflow_tool_input_schema", "workflow_tool_output_schema"]

OPEN_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}


@dataclass(frozen=True)
class WorkflowTool:
    """A workflow offered to the model as a tool.

    ``name`` is the workflow type; ``input_schema`` / ``output_schema`` are JSON schemas (``None``: any
    object); ``task_queue`` is where its workers poll (``None``: the agent's). ``workflow_class`` is set
    for Python workflows: workers of the App register it.
    """

    name: str
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    description: str = ""
    task_queue: str | None = None
    workflow_class: type | None = None

    @classmethod
    def from_class(cls, workflow_class: type, *, task_queue: str | None = None, description: str = "") -> WorkflowTool:
        """Describe a ``@workflow.defn`` class: its name and the JSON schemas of its ``run`` argument and result."""
        definition = _Definition.from_class(workflow_class)
        if definition is None or definition.name is None:
            raise ConfigurationError(f"{workflow_class.__name__} is not a @workflow.defn class with a name")
        arg_types = definition.arg_types or []
        if len(arg_types) > 1:
            raise ConfigurationError(
                f"workflow {definition.name}: a workflow tool's run() takes one argument (its inputData)"
            )
        input_schema = _schema_of(arg_types[0]) if arg_types else None
        output_schema = _schema_of(definition.ret_type) if definition.ret_type is not None else None
        doc = inspect.getdoc(workflow_class) or ""
        return cls(
            name=definition.name,
            input_schema=input_schema,
            output_schema=output_schema,
            description=description or doc,
            task_queue=task_queue,
            workflow_class=workflow_class,
        )

    @classmethod
    def coerce(cls, value: Any, *, where: str) -> WorkflowTool:
        if isinstance(value, WorkflowTool):
            return value
        if isinstance(value, type) and _Definition.from_class(value) is not None:
            return cls.from_class(value)
        raise ConfigurationError(f"{where} is a {type(value).__name__}, not a @workflow.defn class or a WorkflowTool")


def _schema_of(annotation: Any) -> dict[str, Any] | None:
    if annotation is None or annotation is Any:
        return None
    try:
        return TypeAdapter(annotation).json_schema()
    except Exception:
        return None


def workflow_tool_input_schema(spec: WorkflowTool) -> dict[str, Any]:
    """``{inputData: <the workflow's input schema>}`` (the model-visible input of ``workflow-<key>``)."""
    return {
        "type": "object",
        "properties": {"inputData": spec.input_schema or OPEN_OBJECT},
        "required": ["inputData"],
        "additionalProperties": True,
    }


def workflow_tool_output_schema(spec: WorkflowTool) -> dict[str, Any]:
    """``{runId, result}`` or ``{runId, error}``."""
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"runId": {"type": "string"}, "result": spec.output_schema or {}},
                "required": ["runId", "result"],
            },
            {
                "type": "object",
                "properties": {"runId": {"type": "string"}, "error": {"type": "string"}},
                "required": ["runId", "error"],
            },
        ]
    }


def workflow_tool(key: str, spec: WorkflowTool) -> Tool:
    """The ``workflow-<key>`` tool that runs ``spec`` as a child workflow."""
    name = f"workflow-{key}"

    async def start(args: dict[str, Any], context: ToolContext) -> ChildStart:
        if context.run_id is None or context.tool_call_id is None:
            raise ConfigurationError(f"{name} runs inside an agent run only")
        return ChildStart(
            kind="workflow",
            key=key,
            workflow=spec.name,
            child_run_id=child_run_id(context.run_id, context.tool_call_id),
            input=args.get("inputData"),
            task_queue=spec.task_queue,
        )

    return ChildTool(
        id=name,
        description=spec.description or f"Workflow: {key}",
        execute=start,
        input_schema=workflow_tool_input_schema(spec),
    )
