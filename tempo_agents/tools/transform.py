"""Display and transcript projections of a tool's payloads.

``display`` functions shape the journal chunks clients see (arguments, argument deltas, results,
errors, approval and suspension payloads); ``transcript`` functions shape what is kept in memory
for later runs. Neither changes what ``execute`` receives, and ``to_model_output`` still decides what
the model sees for the current result. A projection that raises never falls back to the raw
payload: the chunk carries :data:`REDACTED` instead. When a tool projects its input for display but
has no ``input_delta`` projection, its raw argument deltas are not journaled at all.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal, TypeAlias

from tempo_agents.errors import ConfigurationError
from tempo_agents.tools.user_code import call_user_function

__all__ = [
    "REDACTED",
    "Phase",
    "Slot",
    "Target",
    "TargetTransforms",
    "ToolTransform",
    "TransformContext",
    "TransformFunction",
    "merge_transforms",
    "project",
]

_log = logging.getLogger("tempo_agents.tools")

Target: TypeAlias = Literal["display", "transcript"]
Phase: TypeAlias = Literal[
    "input-delta", "input-available", "output-available", "error", "approval", "suspend", "resume"
]
Slot: TypeAlias = Literal["input", "input_delta", "output", "error", "approval", "suspend", "resume"]

REDACTED: dict[str, Any] = {"redacted": True, "reason": "transform failed"}
"""What a chunk carries in place of a payload whose projection raised."""

_PHASES: dict[str, Phase] = {
    "input": "input-available",
    "input_delta": "input-delta",
    "output": "output-available",
    "error": "error",
    "approval": "approval",
    "suspend": "suspend",
    "resume": "resume",
}


@dataclass(frozen=True)
class TransformContext:
    """What a projection receives; the payload fields that do not apply to its phase are ``None``."""

    target: Target
    phase: Phase
    tool_name: str
    tool_call_id: str
    input: Any = None
    input_text_delta: str | None = None
    output: Any = None
    error: str | None = None
    suspend_payload: Any = None
    resume_data: Any = None


TransformFunction = Callable[[TransformContext], Any | Awaitable[Any]]


@dataclass(frozen=True)
class TargetTransforms:
    """The projections of one target."""

    input: TransformFunction | None = None
    input_delta: TransformFunction | None = None
    output: TransformFunction | None = None
    error: TransformFunction | None = None
    approval: TransformFunction | None = None
    suspend: TransformFunction | None = None
    resume: TransformFunction | None = None

    @classmethod
    def coerce(cls, value: TargetTransforms | Mapping[str, Any] | None, where: str) -> TargetTransforms | None:
        if value is None or isinstance(value, TargetTransforms):
            return value
        names = {f.name for f in fields(cls)}
        aliases = {"inputDelta": "input_delta"}
        given = {aliases.get(key, key): fn for key, fn in value.items()}
        unknown = sorted(set(given) - names)
        if unknown:
            raise ConfigurationError(f"{where}: unknown transform(s) {unknown}; use {sorted(names)}")
        for key, fn in given.items():
            if not callable(fn):
                raise ConfigurationError(f"{where}: transform {key!r} must be a function")
        return cls(**given)


@dataclass(frozen=True)
class ToolTransform:
    """``display`` and ``transcript`` projections of a tool (or, on an agent, of all its tools)."""

    display: TargetTransforms | None = None
    transcript: TargetTransforms | None = None

    @classmethod
    def coerce(cls, value: ToolTransform | Mapping[str, Any] | None, where: str) -> ToolTransform | None:
        """Accept ``{"display": {"output": f, "inputDelta": g}, "transcript": {...}}``."""
        if value is None or isinstance(value, ToolTransform):
            return value
        unknown = sorted(set(value) - {"display", "transcript"})
        if unknown:
            raise ConfigurationError(f"{where}: unknown transform target(s) {unknown}; use display and transcript")
        return cls(
            display=TargetTransforms.coerce(value.get("display"), f"{where} display"),
            transcript=TargetTransforms.coerce(value.get("transcript"), f"{where} transcript"),
        )

    def function(self, target: Target, slot: Slot) -> TransformFunction | None:
        transforms = self.display if target == "display" else self.transcript
        return getattr(transforms, slot) if transforms is not None else None

    def drops_input_deltas(self) -> bool:
        """Raw argument deltas would reveal an input that is projected for display: they are not shown."""
        return self.function("display", "input") is not None and self.function("display", "input_delta") is None


def merge_transforms(agent_policy: ToolTransform | None, tool: ToolTransform | None) -> ToolTransform | None:
    """The tool's projections win over the agent's policy, slot by slot."""
    if agent_policy is None or tool is None:
        return tool or agent_policy

    def pick(target: Target) -> TargetTransforms:
        slots = {
            f.name: tool.function(target, f.name) or agent_policy.function(target, f.name)  # type: ignore[arg-type]
            for f in fields(TargetTransforms)
        }
        return TargetTransforms(**slots)

    return ToolTransform(display=pick("display"), transcript=pick("transcript"))


async def project(
    transform: ToolTransform | None,
    target: Target,
    slot: Slot,
    raw: Any,
    *,
    tool_name: str,
    tool_call_id: str,
    **payload: Any,
) -> Any:
    """``raw`` projected for ``target`` (unchanged without a projection; :data:`REDACTED` if it raises)."""
    function = transform.function(target, slot) if transform is not None else None
    if function is None:
        return raw
    context = TransformContext(
        target=target, phase=_PHASES[slot], tool_name=tool_name, tool_call_id=tool_call_id, **payload
    )
    try:
        return await call_user_function(function, context)
    except Exception:
        _log.exception("tool %s: the %s %s transform raised; the payload is redacted", tool_name, target, slot)
        return dict(REDACTED)
