"""The child-relay activity's boundary: a call that goes on as a child workflow, relayed into the parent's journal."""

from __future__ import annotations

from tempo_agents._wire import WireModel
from tempo_agents.workflows.child_payloads import ChildOutcome, ChildStart
from tempo_agents.workflows.payloads.tool_calls import ToolCallInput, ToolCallResult

__all__ = ["ChildRelayInput", "ChildRelayResult"]


class ChildRelayInput(WireModel):
    """Input of the child-relay activity: the parent's call, its child, and where the relay takes over.

    For a sub-agent, the relay copies the child's journal into the parent's (from ``cursor``) until a
    segment of the child ends; for a workflow tool it records ``outcome``.
    """

    call: ToolCallInput
    start: ChildStart
    cursor: int = 0
    outcome: ChildOutcome | None = None


class ChildRelayResult(WireModel):
    """How the relay left the call, and where the next relay of the same child takes over."""

    result: ToolCallResult
    cursor: int = 0
    child_tool_call_id: str | None = None
    """The child's waiting call the parent's suspension stands for."""
