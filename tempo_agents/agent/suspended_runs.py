"""The ``list_suspended_runs`` result: runs waiting for a person, found through visibility."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from tempo_agents._wire import WireModel
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW

__all__ = ["SuspendedRun", "SuspendedRuns", "SuspendedToolCall"]


class SuspendedToolCall(WireModel):
    """A tool call a suspended run waits on: its arguments, whether it waits for an approval, its suspend payload."""

    tool_call_id: str
    tool_name: str
    args: Any = None
    requires_approval: bool = False
    suspend_payload: Any = None


class SuspendedRun(WireModel):
    """A run that waits for a person: its agent, thread and resource, since when, and the calls it waits on."""

    run_id: str
    status: Literal["suspended"] = "suspended"
    workflow_name: str = AGENT_RUN_WORKFLOW
    agent_id: str | None = None
    thread_id: str | None = None
    resource_id: str | None = None
    suspended_at: datetime | None = None
    tool_calls: list[SuspendedToolCall] = Field(default_factory=list)


class SuspendedRuns(WireModel):
    """A page of suspended runs and how many there are in all."""

    runs: list[SuspendedRun]
    total: int
