"""Tool and create_tool: a typed, validated unit of work an agent can call."""

from __future__ import annotations

import copy
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Literal

from pydantic_core import to_jsonable_python

from tempo_agents.activity_options import ActivityOptions
from tempo_agents.errors import ConfigurationError
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.lifecycle import LifecycleHook, ToolLifecycleEvent, run_lifecycle_hook
from tempo_agents.tools.suspension import Suspender
from tempo_agents.tools.transform import ToolTransform
from tempo_agents.tools.user_code import call_user_function
from tempo_agents.tools.validation import (
    Schema,
    SchemaLike,
    to_schema,
    validate_input,
    validate_output,
)

__all__ = [
    "ApprovalPredicate",
    "ExecuteFunction",
    "ToModelOutput",
    "Tool",
    "checked_approvers",
    "create_tool",
    "run_tool",
]

ExecuteFunction = Callable[..., Any]
ApprovalPredicate = Callable[[Any, ToolContext], bool | Awaitable[bool]]
ToModelOutput = Callable[[Any], Any]

_log = logging.getLogger("tempo_agents.tools")


class Tool:
    """A tool: id, description, schemas and the ``execute`` function. Create one with :func:`create_tool`.

    ``execute(input, context)`` receives the validated input (an instance of ``input_schema``
    when it is a pydantic model, the validated dict for a JSON-schema dict) and a
    :class:`ToolContext`; it may be sync or async. ``require_approval`` is ``True`` or a predicate
    ``(input, context) -> bool`` (a predicate that raises means approval is required).
    ``suspend_expires_in`` is the default deadline of this tool's suspensions and approvals; ``remind_every`` re-sends
    a waiting call's notification every interval, ``escalate_after`` re-addresses it to ``escalate_to`` once, and
    ``notify`` names the notification channels of its waits (README, "Notifications").
    ``on_input_start``, ``on_input_delta``, ``on_input_available`` and ``on_output`` receive a
    :class:`ToolLifecycleEvent`; one that raises is logged and does not fail the call.
    ``transform={"display": {...}, "transcript": {...}}`` projects payloads for clients and for memory.
    ``activity`` sets the call's timeouts and how many lost workers it survives (:class:`ActivityOptions`).
    ``approvers`` assigns the call's approvals and suspensions: principals and ``group:<name>``s, or the name of
    an approver policy registered on the App (``None``: the agent's; empty: anyone may answer).
    """

    def __init__(
        self,
        *,
        id: str,
        description: str,
        execute: ExecuteFunction | None = None,
        input_schema: SchemaLike | None = None,
        output_schema: SchemaLike | None = None,
        suspend_schema: SchemaLike | None = None,
        resume_schema: SchemaLike | None = None,
        require_approval: bool | ApprovalPredicate = False,
        to_model_output: ToModelOutput | None = None,
        output_validation: Literal["strict", "warn"] = "strict",
        title: str | None = None,
        suspend_expires_in: timedelta | None = None,
        notify: Sequence[str] | None = None,
        remind_every: timedelta | None = None,
        escalate_after: timedelta | None = None,
        escalate_to: Sequence[str] = (),
        on_input_start: LifecycleHook | None = None,
        on_input_delta: LifecycleHook | None = None,
        on_input_available: LifecycleHook | None = None,
        on_output: LifecycleHook | None = None,
        transform: ToolTransform | Mapping[str, Any] | None = None,
        activity: ActivityOptions | None = None,
        approvers: Sequence[str] | str | None = None,
        answer_requires_sign_in: bool | None = None,
    ) -> None:
        if not isinstance(id, str) or not id:
            raise ConfigurationError("create_tool() needs a non-empty string id")
        if not isinstance(description, str) or not description:
            raise ConfigurationError(f"tool {id!r} needs a non-empty description: the model reads it")
        if execute is not None and not callable(execute):
            raise ConfigurationError(f"tool {id!r}: execute must be a function, got {type(execute).__name__}")
        if output_validation not in ("strict", "warn"):
            raise ConfigurationError(f"tool {id!r}: output_validation must be 'strict' or 'warn'")
        self.id = id
        self.description = description
        self.title = title
        self.execute_fn = execute
        self.input_schema: Schema | None = to_schema(input_schema)
        self.output_schema: Schema | None = to_schema(output_schema)
        self.suspend_schema: Schema | None = to_schema(suspend_schema)
        self.resume_schema: Schema | None = to_schema(resume_schema)
        self.require_approval = require_approval
        self.to_model_output = to_model_output
        self.output_validation = output_validation
        self.suspend_expires_in = suspend_expires_in
        self.notify = None if notify is None else list(notify)
        """The notification channels (by name) of this tool's waiting calls (``None``: the agent's)."""
        self.remind_every = remind_every
        self.escalate_after = escalate_after
        self.escalate_to = list(escalate_to)
        for name, value in (("remind_every", remind_every), ("escalate_after", escalate_after)):
            if value is not None and value <= timedelta(0):
                raise ConfigurationError(f"tool {id!r}: {name} must be a positive duration")
        if escalate_after is not None and not escalate_to:
            raise ConfigurationError(f"tool {id!r}: escalate_after needs escalate_to (principals or group:<name>)")
        self.on_input_start = on_input_start
        self.on_input_delta = on_input_delta
        self.on_input_available = on_input_available
        self.on_output = on_output
        self.transform = ToolTransform.coerce(transform, f"tool {id!r}")
        if activity is not None and not isinstance(activity, ActivityOptions):
            raise ConfigurationError(f"tool {id!r}: activity must be ActivityOptions, got {type(activity).__name__}")
        self.activity = activity
        """Timeouts and retries of this tool's calls (``None``: the defaults)."""
        self.approvers = checked_approvers(approvers, f"tool {id!r}")
        """Who may answer this tool's waiting calls, or the name of an approver policy (``None``: the agent's)."""
        self.answer_requires_sign_in = answer_requires_sign_in
        """Whether its waiting calls are answered only by a signed-in person on the dashboard: their links open
        the dashboard instead of answering (``None``: the agent's)."""
        self._model_schema: dict[str, Any] | None = None
        self.provider_tool: str | None = None
        """Set on markers the model adapter replaces with a provider-native tool (``web_search``)."""
        self.workflow_operation: str | None = None

        """Set on built-ins that change workflow state (the task tools): the workflow runs them itself."""

    def __repr__(self) -> str:
        return f"Tool(id={self.id!r})"

    @property
    def executable(self) -> bool:
        """Whether the tool has an ``execute`` function (provider tools do not)."""
        return self.execute_fn is not None

    def model_input_schema(self) -> dict[str, Any]:
        """The JSON schema the model is given for this tool's arguments (computed once; a copy each call)."""
        if self._model_schema is None:
            if self.input_schema is None:
                self._model_schema = {"type": "object", "properties": {}, "additionalProperties": True}
            else:
                self._model_schema = self.input_schema.json_schema()
        return copy.deepcopy(self._model_schema)

    def set_model_input_schema(self, schema: dict[str, Any]) -> None:
        """Give the model a schema other than the one derived from ``input_schema`` (built-ins use this)."""
        self._model_schema = schema

    async def execute(self, input: Any = None, context: ToolContext | None = None) -> Any:
        """Validate ``input`` and run the tool.

        Returns the tool's output, or the validation-error result (``{error: True, message,
        validationErrors}``) when the input or the output does not match its schema. Called
        outside a run, the context has no ``suspend``.
        """
        return await run_tool(self, input, context or ToolContext())


async def run_tool(tool: Tool, raw_input: Any, context: ToolContext) -> Any:
    """The validation pipeline around a tool's ``execute``: input, execute, output."""
    if tool.execute_fn is None:
        raise ConfigurationError(f"Tool is not executable: {tool.id} has no execute function")
    validated, failure = validate_input(tool.id, tool.input_schema, raw_input)
    if failure is not None:
        return failure.to_result()
    context.accepted_input = _snapshot(validated)
    name = context.tool_name or tool.id
    event = ToolLifecycleEvent(
        tool_call_id=context.tool_call_id or "", tool_name=name, messages=context.messages, input=validated
    )
    await run_lifecycle_hook(tool.on_input_available, "on_input_available", event)
    output = await call_user_function(tool.execute_fn, validated, context)
    if isinstance(context.suspend, Suspender) and context.suspend.called:
        return output
    output_event = ToolLifecycleEvent(tool_call_id=event.tool_call_id, tool_name=name, output=output)

    await run_lifecycle_hook(tool.on_output, "on_output", output_event)

    if tool.output_schema is not None and output is not None:
        _, output_failure = validate_output(tool.id, tool.output_schema, output)
        if output_failure is not None:
            _log.warning(output_failure.message)
            if tool.output_validation == "strict":
                return output_failure.to_result()
    return output


def checked_approvers(approvers: Sequence[str] | str | None, where: str) -> list[str] | str | None:
    """``approvers=`` as kept: a list of principals and ``group:<name>``s, a policy's name, or ``None``."""
    if approvers is None or isinstance(approvers, str):
        if approvers == "":
            raise ConfigurationError(f"{where}: approvers must name a policy or list principals, not ''")
        return approvers
    listed = list(approvers)
    if not all(isinstance(name, str) and name for name in listed):
        raise ConfigurationError(f"{where}: approvers must be non-empty strings (principals or 'group:<name>')")
    return listed


def _snapshot(validated: Any) -> Any:
    """The accepted input as JSON, taken before ``execute`` may change it: a resumed call gets it back
    as it was accepted. Kept as it is when it cannot be stored as JSON (suspending then fails readably)."""
    try:
        return to_jsonable_python(validated, by_alias=True)
    except Exception:
        return validated


create_tool = Tool
"""Define a tool: ``create_tool(id=..., description=..., execute=...)`` builds a :class:`Tool` (its parameters are
described there)."""
