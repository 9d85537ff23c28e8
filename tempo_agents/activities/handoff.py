"""What the tool-call activity needs from a Temporal client: taking a suspended call over (auto-resume).

Activities hold a :class:`~tempo_agents.activities.registry.Registry`, never the client façade; this small
protocol is the one thing they may ask of a client, implemented by the App.
"""

from __future__ import annotations

from typing import Protocol

from tempo_agents.workflows.payloads import HandoffAccepted, MemoryRef

__all__ = ["CallHandoff"]


class CallHandoff(Protocol):
    """Takes a suspended call of a tool over from an earlier run of the same thread."""

    async def take_over(
        self, *, by_run_id: str, tool_call_id: str, tool_name: str, memory: MemoryRef | None, from_run_id: str | None
    ) -> HandoffAccepted:
        """The call's input and suspend payload; raises ``LookupError`` when no such call waits."""
        ...
