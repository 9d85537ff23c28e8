"""The tool-call activity's boundary: the call the model made, its input, and how it ended (a result, an error, a
suspension, a refused answer, or a child workflow to start)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from tempo_agents._wire import WireModel
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.journal.outbox import JournalOutbox
from tempo_agents.workflows.child_payloads import ChildStart
from tempo_agents.workflows.payloads.answers import Resolution
from tempo_agents.workflows.payloads.run_input import RunOptions
from tempo_agents.workflows.payloads.segment_close import BatchClose

__all__ = ["Suspension", "ToolCallInput", "ToolCallRequest", "ToolCallResult"]


class ToolCallRequest(WireModel):
    """A tool call the model made, with its parsed arguments.

    ``index`` is its place among the step's calls; ``operation`` names the workflow-state built-in
    (``task_write`` …) that the workflow runs itself instead of an activity.
    """

    tool_call_id: str
    tool_name: str
    args: Any = None
    index: int = 0
    operation: str | None = None
    activity: ActivityOptions | None = None
    """The tool's activity options (``None``: the defaults)."""


class ToolCallInput(WireModel):
    """Input of the tool-call activity. ``round`` counts how often the call was resumed."""

    run_id: str
    agent_id: str
    step: int
    call: ToolCallRequest
    options: RunOptions
    round: int = 0
    refusals: int = 0
    """How many answers of this round its tool refused before (``resume-rejected``): the call's keys differ from
    theirs, so this answer is not mistaken for a refused one."""
    resolution: Resolution | None = None
    suspend_payload: Any = None
    input_snapshot: Any = None
    mode: str | None = None
    outbox: JournalOutbox = Field(default_factory=JournalOutbox)
    batch: BatchClose | None = None


class Suspension(WireModel):
    """A call that stopped to wait for a person."""

    kind: Literal["suspension", "approval"]
    tool_id: str | None = None
    suspend_payload: Any = None
    resume_schema: str = ""
    input_snapshot: Any = None
    expires_in_seconds: float | None = None
    remind_every_seconds: float | None = None
    """Re-send the waiting call's notification every so often (workflow time)."""
    escalate_after_seconds: float | None = None
    """Re-address the call to ``escalate_to`` once it has waited this long."""
    escalate_to: list[str] | None = None
    approvers: list[str] = Field(default_factory=list)
    """Who may answer (principals, ``group:<name>``); empty: anyone. Computed by the activity (a policy is user
    code), kept by the workflow with the waiting call."""
    args_schema: str = ""
    """An approval: the tool's input JSON schema, which edited arguments must match (``{}``: any arguments; empty:
    its arguments cannot be changed, as for a call that waits for its child's approval)."""


class ToolCallResult(WireModel):
    """How a tool call ended; its output is in the journal and the transcript."""

    status: Literal["result", "error", "suspended", "resume-rejected", "delegate"]
    suspension: Suspension | None = None
    child: ChildStart | None = None
    """``delegate``: the call goes on as this child workflow (``agent-<key>``, ``workflow-<key>``)."""
    message: str | None = None
    switch_mode_to: str | None = None
    """The mode the tool moved the run to (``submit_plan`` approved)."""
    closed_segment: bool = False
    """This call found its batch ended and wrote the end of the segment."""
