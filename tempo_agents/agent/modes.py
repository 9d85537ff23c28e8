"""Agent modes: named sets of instructions and tools a run moves between (plan → build)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tempo_agents.errors import ConfigurationError

__all__ = ["AgentMode", "ModeInstructions", "check_modes"]

ModeInstructions = str | Callable[[dict[str, Any]], str | Awaitable[str]]


@dataclass(frozen=True)
class AgentMode:
    """A mode of an agent.

    ``instructions`` are added after the agent's own; ``active_tools`` (model-visible names) limit
    the tools offered and allowed while the run is in this mode; approving a plan submitted in this
    mode moves the run to ``transitions_to`` (else to the agent's default mode).
    """

    id: str
    instructions: ModeInstructions | None = None
    active_tools: Sequence[str] | None = None
    transitions_to: str | None = None


def check_modes(agent_id: str, modes: Sequence[AgentMode], default_mode: str | None, tool_names: set[str]) -> None:
    """Refuse duplicate ids, unknown transitions, unknown tools and an unknown default mode."""
    ids = [mode.id for mode in modes]
    if len(set(ids)) != len(ids):
        raise ConfigurationError(f'agent "{agent_id}": two modes share an id ({", ".join(ids)})')
    for mode in modes:
        if mode.transitions_to is not None and mode.transitions_to not in ids:
            raise ConfigurationError(
                f'agent "{agent_id}": mode "{mode.id}" transitions to unknown mode "{mode.transitions_to}"'
            )
        unknown = sorted(set(mode.active_tools or ()) - tool_names)
        if unknown:
            raise ConfigurationError(f'agent "{agent_id}": mode "{mode.id}" names unknown tools: {", ".join(unknown)}')
    if default_mode is not None and default_mode not in ids:
        raise ConfigurationError(f'agent "{agent_id}": default mode "{default_mode}" is not one of its modes')
