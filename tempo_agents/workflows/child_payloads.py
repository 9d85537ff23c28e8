"""What crosses the workflow boundary for calls that run as child workflows (``agent-<key>``, ``workflow-<key>``).

ARCHITECTURE.md, "Sub-agents and workflows as tools", follows one such call.
"""

from __future__ import annotations

from typing import Any, Literal

from tempo_agents._wire import WireModel

__all__ = [
    "CHILD_RESUME_SIGNAL",
    "CHILD_RUN_CHUNK",
    "CHILD_SUSPENDED_SIGNAL",
    "ChildKind",
    "ChildOutcome",
    "ChildResume",
    "ChildStart",
    "ChildSuspension",
]

ChildKind = Literal["agent", "workflow"]

CHILD_RUN_CHUNK = "data-child-run"
"""The parent journal's link to a call's child run: ``{toolCallId, toolName, childRunId, kind, workflow}``."""

CHILD_SUSPENDED_SIGNAL = "tempo_agents.child_suspended"
"""Signal a workflow tool sends its parent when it waits for a person (:class:`ChildSuspension`)."""

CHILD_RESUME_SIGNAL = "tempo_agents.resume"
"""Signal the parent sends a waiting workflow tool with the resume data (:class:`ChildResume`)."""


class ChildStart(WireModel):
    """How to start the child of a call: what the tool-call activity decided (hooks and input validated)."""

    kind: ChildKind
    key: str
    workflow: str
    """The child's workflow type name."""
    child_run_id: str
    """The child's workflow id (its run id)."""
    input: Any = None
    task_queue: str | None = None
    """``None``: the parent's task queue."""
    thread_id: str | None = None
    resource_id: str | None = None
    task_timeout_seconds: float | None = None
    """The child's workflow task timeout (``None``: Temporal's default): short for sub-agents with local
    activities, as for any run of theirs."""


class ChildSuspension(WireModel):
    """A workflow tool that waits for a person: what the parent shows as the call's suspension."""

    child_run_id: str
    suspend_payload: Any = None
    resume_schema: dict[str, Any] | None = None


class ChildResume(WireModel):
    """Resume data for a waiting workflow tool."""

    data: Any = None


class ChildOutcome(WireModel):
    """How a workflow tool's child ended, as the parent workflow saw it (``error``: it could not run)."""

    status: Literal["result", "failed", "suspended", "error"]
    result: Any = None
    error: str | None = None
    suspension: ChildSuspension | None = None
