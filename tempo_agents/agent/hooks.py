"""Agent-level and run-level tool hooks: ``before_tool_call`` and ``after_tool_call``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from tempo_agents.errors import ConfigurationError
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.tool import Tool, run_tool
from tempo_agents.tools.user_code import call_user_function

__all__ = [
    "AfterToolCall",
    "BeforeToolCall",
    "ToolCallHookContext",
    "ToolHooks",
    "coerce_hooks",
    "merge_hooks",
    "run_with_hooks",
]


@dataclass(frozen=True)
class ToolCallHookContext:
    """What a hook receives. ``output`` and ``error`` are set for ``after_tool_call`` only."""

    tool_name: str
    input: Any
    context: ToolContext
    metadata: Mapping[str, Any] = field(default_factory=dict)
    output: Any = None
    error: BaseException | None = None


_Hooks = TypeVar("_Hooks")


def coerce_hooks(
    cls: type[_Hooks], value: _Hooks | Mapping[str, Any] | None, *, where: str, kind: str, option: str
) -> _Hooks | None:
    """``value`` as the hooks dataclass ``cls``: kept as it is, or built from a mapping of its field names
    (a name it does not have is refused, naming ``kind``; anything else is refused, naming ``option``)."""
    if value is None or isinstance(value, cls):
        return value
    names = [hook.name for hook in fields(cls)]  # type: ignore[arg-type]  # cls is a dataclass
    if isinstance(value, Mapping):
        unknown = set(value) - set(names)
        if unknown:
            raise ConfigurationError(f"{where}: unknown {kind}(s) {sorted(unknown)}; use {' and '.join(names)}")
        return cls(*(value.get(name) for name in names))
    raise ConfigurationError(f"{where}: {option} must be {cls.__name__} or a mapping, got {type(value).__name__}")


BeforeToolCall = Callable[[ToolCallHookContext], Any | Awaitable[Any]]
AfterToolCall = Callable[[ToolCallHookContext], Any | Awaitable[Any]]


@dataclass(frozen=True)
class ToolHooks:
    """Hooks around every tool call of an agent.

    ``before_tool_call`` may return ``{"proceed": False, "output": value}`` to skip validation,
    ``execute`` and ``after_tool_call``: ``value`` becomes the tool's result. ``after_tool_call``
    sees the output or the error; its return value is ignored, and an error is re-raised after it.
    """

    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None

    @classmethod
    def coerce(cls, value: ToolHooks | Mapping[str, Any] | None, *, where: str) -> ToolHooks | None:
        """Accept a :class:`ToolHooks` or a ``{"before_tool_call": f, "after_tool_call": g}`` mapping."""
        return coerce_hooks(cls, value, where=where, kind="hook", option="hooks")


def merge_hooks(agent_hooks: ToolHooks | None, run_hooks: ToolHooks | None) -> ToolHooks | None:
    """Run-level hooks replace agent-level hooks key by key."""
    if agent_hooks is None:
        return run_hooks
    if run_hooks is None:
        return agent_hooks
    return ToolHooks(
        before_tool_call=run_hooks.before_tool_call or agent_hooks.before_tool_call,
        after_tool_call=run_hooks.after_tool_call or agent_hooks.after_tool_call,
    )


async def run_with_hooks(
    tool: Tool,
    tool_name: str,
    raw_input: Any,
    context: ToolContext,
    hooks: ToolHooks | None,
    metadata: Mapping[str, Any],
) -> Any:
    """Run a tool inside the hooks: before, validation and execute, after (or the error, re-raised)."""
    hook_context = ToolCallHookContext(tool_name=tool_name, input=raw_input, context=context, metadata=metadata)
    if hooks is not None and hooks.before_tool_call is not None:
        decision = await call_user_function(hooks.before_tool_call, hook_context)
        if isinstance(decision, Mapping) and decision.get("proceed") is False:
            return decision.get("output")
    try:
        output = await run_tool(tool, raw_input, context)
    except Exception as error:
        if hooks is not None and hooks.after_tool_call is not None:
            await call_user_function(
                hooks.after_tool_call,
                ToolCallHookContext(tool_name, raw_input, context, metadata, output=None, error=error),
            )
        raise
    if hooks is not None and hooks.after_tool_call is not None:
        await call_user_function(
            hooks.after_tool_call, ToolCallHookContext(tool_name, raw_input, context, metadata, output=output)
        )
    return output
