"""Calls that run as child workflows: the :class:`ChildTool` kind, sub-agents as the ``agent-<key>`` tool, and
the delegation hooks around them (``workflow_tools.py`` makes the ``workflow-<key>`` tool of the same kind).

The tool's ``execute`` runs in the parent's tool-call activity: it runs ``on_delegation_start`` and answers
with a :class:`ChildStart`; the parent workflow starts the sub-agent's run as a child workflow
(ARCHITECTURE.md, "Sub-agents and workflows as tools").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from tempo_agents.agent.hooks import coerce_hooks
from tempo_agents.agent.local_activities import ActivitySettings, workflow_task_timeout
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import Message, TextPart
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.tool import Tool
from tempo_agents.tools.user_code import call_user_function
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW
from tempo_agents.workflows.child_payloads import ChildStart
from tempo_agents.workflows.payloads import MemoryRef, RunInput, RunOptions

__all__ = [
    "AGENT_TOOL_INPUT_SCHEMA",
    "AGENT_TOOL_OUTPUT_SCHEMA",
    "DEFAULT_MAX_STEPS",
    "MIN_SUB_AGENT_STEPS",
    "REJECTED_BY_HOOK",
    "ChildTool",
    "DelegatedAgent",
    "DelegatingAgent",
    "DelegationComplete",
    "DelegationHooks",
    "DelegationStart",
    "OnDelegationComplete",
    "OnDelegationStart",
    "agent_tool_text",
    "child_run_id",
    "is_child_tool",
    "sub_agent_tool",
]

MIN_SUB_AGENT_STEPS = 3
DEFAULT_MAX_STEPS = 5
REJECTED_BY_HOOK = "Delegation rejected by onDelegationStart hook"


class ChildTool(Tool):
    """An ``agent-<key>`` or ``workflow-<key>`` tool. Only an agent's run calls it (it starts a child workflow of
    that run), so it is not among the App's tools that can be run directly."""


def is_child_tool(tool: Tool) -> bool:
    """Whether calls of this tool run as child workflows."""
    return isinstance(tool, ChildTool)


AGENT_TOOL_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "The prompt to send to the agent"},
        "threadId": {
            "type": ["string", "null"],
            "description": "Thread ID for conversation continuity for memory messages",
        },
        "resourceId": {"type": ["string", "null"], "description": "Resource/user identifier for memory messages"},
        "instructions": {
            "type": ["string", "null"],
            "description": "Additional instructions to append to the agent instructions. Only provide if you have "
            "specific guidance beyond what the agent already knows. Leave empty in most cases.",
        },
        "maxSteps": {
            "type": "number",
            "minimum": MIN_SUB_AGENT_STEPS,
            "description": "Maximum number of execution steps for the sub-agent",
        },
    },
    "required": ["prompt"],
    "additionalProperties": False,
}
"""What the model gives an ``agent-<key>`` call."""

AGENT_TOOL_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "subAgentThreadId": {"type": "string"},
        "subAgentResourceId": {"type": "string"},
        "subAgentToolResults": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "toolName": {"type": "string"},
                    "toolCallId": {"type": "string"},
                    "result": {},
                    "args": {},
                    "isError": {"type": "boolean"},
                },
                "required": ["toolName", "toolCallId", "result"],
            },
        },
    },
    "required": ["text"],
}
"""What an ``agent-<key>`` call results in (the model sees ``text`` only)."""


@dataclass(frozen=True)
class DelegationStart:
    """What ``on_delegation_start`` receives: the sub-agent's key and what the model asked of it."""

    agent_key: str
    prompt: str
    instructions: str | None
    max_steps: int
    thread_id: str | None
    resource_id: str | None
    context: ToolContext


@dataclass(frozen=True)
class DelegationComplete:
    """What ``on_delegation_complete`` receives: the sub-agent's result (``None`` when it failed) or error."""

    agent_key: str
    child_run_id: str
    result: Mapping[str, Any] | None
    error: str | None = None


OnDelegationStart = Callable[[DelegationStart], Any | Awaitable[Any]]
OnDelegationComplete = Callable[[DelegationComplete], Any | Awaitable[Any]]


@dataclass(frozen=True)
class DelegationHooks:
    """Hooks around an agent's sub-agent calls (run on the worker, in the call's activities).

    ``on_delegation_start`` may return ``{"proceed": False, "reason": ...}`` to refuse the call (its result
    is then ``[Delegation Rejected] <reason>``) or ``{"prompt", "instructions", "max_steps"}`` to rewrite
    them. ``on_delegation_complete`` sees the result; it may return ``{"feedback": text}``, appended to the
    text the model reads.
    """

    on_delegation_start: OnDelegationStart | None = None
    on_delegation_complete: OnDelegationComplete | None = None

    @classmethod
    def coerce(cls, value: DelegationHooks | Mapping[str, Any] | None, *, where: str) -> DelegationHooks | None:
        return coerce_hooks(cls, value, where=where, kind="delegation hook", option="delegation")


def child_run_id(parent_run_id: str, tool_call_id: str) -> str:
    """The run id (workflow id) of the child a call starts: one per call, the same on every retry."""
    return f"{parent_run_id}-{tool_call_id}"


def agent_tool_text(output: Any) -> Any:
    """What the model reads of an ``agent-<key>`` result: its text (a string result as it is)."""
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping):
        text = output.get("text")
        return text if isinstance(text, str) else ""
    return ""


class DelegatedAgent(ActivitySettings, Protocol):
    """What delegating to a sub-agent reads of it (an :class:`~tempo_agents.agent.agent.Agent`)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def default_options(self) -> Mapping[str, Any]: ...


class DelegatingAgent(Protocol):
    """What delegating reads of the parent agent: its hooks around sub-agent calls."""

    @property
    def delegation(self) -> DelegationHooks | None: ...


def sub_agent_tool(key: str, sub_agent: DelegatedAgent, parent: DelegatingAgent) -> Tool:
    """The ``agent-<key>`` tool that delegates to ``sub_agent``."""
    name = f"agent-{key}"

    async def delegate(args: dict[str, Any], context: ToolContext) -> Any:
        run_id, call_id = context.run_id, context.tool_call_id
        if run_id is None or call_id is None:
            raise ConfigurationError(f"{name} runs inside an agent run only")
        cap = int(sub_agent.default_options.get("max_steps", DEFAULT_MAX_STEPS))
        requested = args.get("maxSteps")
        start = DelegationStart(
            agent_key=key,
            prompt=args["prompt"],
            instructions=args.get("instructions") or None,
            max_steps=cap if requested is None else min(int(requested), cap),
            thread_id=args.get("threadId") or None,
            resource_id=args.get("resourceId") or None,
            context=context,
        )
        hooks = parent.delegation
        if hooks is not None and hooks.on_delegation_start is not None:
            decision = await call_user_function(hooks.on_delegation_start, start)
            if isinstance(decision, Mapping):
                if decision.get("proceed") is False:
                    return f"[Delegation Rejected] {decision.get('reason') or REJECTED_BY_HOOK}"
                start = DelegationStart(
                    agent_key=key,
                    prompt=str(decision.get("prompt", start.prompt)),
                    instructions=decision.get("instructions", start.instructions),
                    max_steps=min(int(decision.get("max_steps", start.max_steps)), cap),
                    thread_id=start.thread_id,
                    resource_id=start.resource_id,
                    context=context,
                )
        child_id = child_run_id(run_id, call_id)
        thread, resource = start.thread_id, start.resource_id
        if context.thread_id is not None:
            thread = thread or f"{context.thread_id}-{child_id}"
            resource = resource or f"{context.resource_id}-{sub_agent.name}"
        elif thread is not None:
            resource = resource or f"{run_id}-{sub_agent.name}"
        options = {
            **sub_agent.default_options,
            "max_steps": start.max_steps,
            "request_context": dict(context.request_context),
            "extra_instructions": start.instructions,
            "memory": None if thread is None or resource is None else MemoryRef(thread=thread, resource=resource),
        }
        run_input = RunInput(
            run_id=child_id,
            agent_id=sub_agent.id,
            messages=[Message(role="user", content=[TextPart(text=start.prompt)])],
            options=RunOptions.model_validate(options),
            model_step_activity=sub_agent.model_step_activity,
        )
        task_timeout = workflow_task_timeout(sub_agent)
        return ChildStart(
            kind="agent",
            key=key,
            workflow=AGENT_RUN_WORKFLOW,
            child_run_id=child_id,
            input=run_input.to_wire(),
            thread_id=thread,
            resource_id=resource,
            task_timeout_seconds=None if task_timeout is None else task_timeout.total_seconds(),
        )

    tool = ChildTool(
        id=name,
        description=sub_agent.description or f"Agent: {key}",
        execute=delegate,
        input_schema=AGENT_TOOL_INPUT_SCHEMA,
        to_model_output=agent_tool_text,
    )
    return tool
