"""Answers to a run's waiting calls: the ``resume`` request and its result, how a call is resolved, the answers a run
keeps, and the ``handoff`` of a suspended call to a later run of the thread."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from tempo_agents._wire import WireModel

__all__ = [
    "MAX_CARRIED_ANSWERS",
    "Answer",
    "HandoffAccepted",
    "HandoffRequest",
    "Resolution",
    "ResumeAccepted",
    "ResumeRequest",
]


MAX_CARRIED_ANSWERS = 100
"""How many answers a run carries across continue-as-new (its history stays small)."""


class Answer(WireModel):
    """One accepted answer to a waiting call, as the ``answers`` query lists it."""

    tool_call_id: str
    tool_name: str
    action: str
    answered_by: str | None = None
    answered_at: datetime | None = None
    data: Any = None
    """What was answered (a resume's data); ``None`` for approvals and declines."""
    reason: str | None = None
    """The reason given with a decline."""
    args: Any = None
    """The arguments an approver changed the call to (``None``: approved as the model made it)."""


class Resolution(WireModel):
    """How a suspended call or an approval request is answered."""

    action: Literal["resume", "approve", "decline", "expire", "handoff"]
    data: Any = None
    reason: str | None = None
    expired: bool = False
    answered_by: str | None = None
    """The principal that answered (the HTTP API's token name), when known."""
    answered_by_groups: list[str] | None = None
    """The groups of ``answered_by``, passed on with the answer to a child run whose call this one stands for."""
    args: Any = None
    """Approved with changed arguments: the arguments the call runs with (``None``: as the model made it)."""
    args_before: Any = None
    """Approved with changed arguments: the arguments the model made, for the journal's record of the change."""


class ResumeRequest(WireModel):
    """The ``resume`` update and signal: answer one pending call (or the only one)."""

    tool_call_id: str | None = None
    action: Literal["resume", "approve", "decline", "handoff"] = "resume"
    data: Any = None
    reason: str | None = None
    agent_id: str | None = None
    """When set, the run must belong to this agent."""
    answered_by: str | None = None
    """Who answers (a principal name): kept with the answer and shown as ``answeredBy`` in its chunk."""
    answered_by_groups: list[str] = Field(default_factory=list)
    """The groups ``answered_by`` belongs to, resolved where the principal is known (the server's tokens, the
    App's groups); a call assigned to ``group:<name>`` may be answered by its members."""
    args: Any = None
    """An approval with changed arguments: the call runs with exactly these (checked against the tool's input
    schema); ``None``: as the model made them."""
    round: int | None = None
    """When set, the answer is for this round of the call only (an answer link is bound to one round)."""


class ResumeAccepted(WireModel):
    """The ``resume`` update's result: the call it answered and the chunk the resumed stream follows."""

    tool_call_id: str
    after_key: str


class HandoffRequest(WireModel):
    """The ``handoff`` update: a later run of the thread takes over a suspended call of this tool."""

    tool_name: str
    by_run_id: str


class HandoffAccepted(WireModel):
    """The ``handoff`` update's result: what the run that takes over the call needs to execute it."""

    tool_call_id: str
    tool_name: str
    args: Any = None
    suspend_payload: Any = None
    input_snapshot: Any = None
