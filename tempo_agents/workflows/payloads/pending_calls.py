"""The calls a run waits on: how the ``pending`` query shows them, their reminders and escalations, and the journal
activity that shows them (and notifies about them) while the run waits."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from tempo_agents._wire import WireModel
from tempo_agents.journal.outbox import JournalRecord
from tempo_agents.workflows.payloads.tool_calls import Suspension, ToolCallInput

__all__ = ["CallAlarm", "JournalInput", "PendingCall"]


class PendingCall(WireModel):
    """A suspended call or approval request of a waiting run, as the ``pending`` query shows it."""

    tool_call_id: str
    tool_name: str
    tool_id: str | None = None
    args: Any = None
    suspend_payload: Any = None
    requires_approval: bool = False
    resume_schema: str = ""
    """The JSON schema resume data must match (a JSON string; empty: anything goes)."""
    suspended_at: datetime
    expires_at: datetime | None = None
    round: int = 0
    step: int = 0
    index: int = 0
    input_snapshot: Any = None
    approvers: list[str] = Field(default_factory=list)
    """Who may answer: principals, or ``group:<name>`` for a group; empty: anyone may answer."""
    args_schema: str = ""
    """An approval: the tool's input JSON schema (a JSON string), which arguments changed by an approver must
    match (``{}``: any arguments); empty: its arguments cannot be changed (a call waiting for its child's approval,
    an approval journaled before changes were possible)."""
    remind_every_seconds: float | None = None
    escalate_after_seconds: float | None = None
    escalate_to: list[str] | None = None
    escalated: bool | None = None
    """``True`` once the call was re-addressed to ``escalate_to`` (its ``approvers`` now); unset before."""

    @classmethod
    def of(cls, call_input: ToolCallInput, suspension: Suspension, suspended_at: datetime, round: int) -> PendingCall:
        """The call ``call_input`` made, waiting in ``round`` as ``suspension`` says since ``suspended_at``: the same
        view for the workflow's ``pending`` query and the store's list of waiting calls."""
        call = call_input.call
        expires = suspension.expires_in_seconds
        return cls(
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            tool_id=suspension.tool_id,
            args=call.args,
            suspend_payload=suspension.suspend_payload,
            requires_approval=suspension.kind == "approval",
            resume_schema=suspension.resume_schema,
            suspended_at=suspended_at,
            expires_at=None if expires is None else suspended_at + timedelta(seconds=expires),
            round=round,
            step=call_input.step,
            index=call.index,
            input_snapshot=suspension.input_snapshot,
            remind_every_seconds=suspension.remind_every_seconds,
            escalate_after_seconds=suspension.escalate_after_seconds,
            escalate_to=suspension.escalate_to,
            approvers=list(suspension.approvers),
            args_schema=suspension.args_schema,
        )

    def reminder_at(self, sent: int) -> datetime | None:
        """When reminder ``sent + 1`` is due (``None``: no reminders)."""
        if self.remind_every_seconds is None:
            return None
        return self.suspended_at + timedelta(seconds=self.remind_every_seconds * (sent + 1))

    def escalation_at(self) -> datetime | None:
        """When the call is re-addressed (``None``: never, or it was already)."""
        if self.escalate_after_seconds is None or self.escalated or not self.escalate_to:
            return None
        return self.suspended_at + timedelta(seconds=self.escalate_after_seconds)


class CallAlarm(WireModel):
    """A waiting call's reminder came due, or it was escalated: the journal activity notifies about it."""

    kind: Literal["reminder", "escalated"]
    call: PendingCall
    reminder: int = 0
    """Which reminder (1, 2, ...)."""


class JournalInput(WireModel):
    """Input of the journal local activity: chunks a waiting run must show at once (a refused signal, a
    reminder, an escalation), and the alarms to notify about."""

    run_id: str
    records: list[JournalRecord]
    agent_id: str | None = None
    alarms: list[CallAlarm] = Field(default_factory=list)
