"""The events a run sends: one model for every type, its stable id, and its links.

An event is computed by the activity that records the change it reports (the tool-call activity for a waiting,
answered or expired call, the activity that ends the run's last segment for its end, the workflow's journal
activity for a reminder or an escalation), from ids and counters only, so every retry of that activity computes
the same event with the same ``id``: the delivery workflow keeps the first and drops the others, and receivers
may use ``id`` (also the ``webhook-id`` header) as an idempotency key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, NamedTuple, Protocol

from pydantic import Field

from tempo_agents._wire import WireModel

__all__ = [
    "AnswerLinkMaker",
    "CallView",
    "EventLinks",
    "NotificationEvent",
    "call_label",
    "dashboard_link",
    "event_id",
]

EventType = Literal[
    "call.waiting",
    "call.reminder",
    "call.escalated",
    "call.expired",
    "call.answered",
    "run.finished",
    "run.failed",
    "run.cancelled",
]

CallKind = Literal["approval", "question", "suspension"]


class AnswerLinkMaker(Protocol):
    """Makes the one-click answer URLs of a waiting call (name -> URL, e.g. ``approve``/``decline``), bound to the
    run, the call, its round and its exact arguments. Plugged into an App as ``answer_links=``."""

    def __call__(
        self,
        run_id: str,
        tool_call_id: str,
        round: int,
        args: Any,
        *,
        kind: str = "approval",
        options: Sequence[str | Mapping[str, Any]] = (),
        approvers: Sequence[str] = (),
    ) -> Mapping[str, str]: ...


class LinkedCall(NamedTuple):
    """What answer links are bound to: the waiting call's id, round and exact arguments (not as displayed), its
    kind, a question's options (its choices) and who may answer."""

    tool_call_id: str
    round: int
    args: Any
    kind: str
    options: Sequence[str | Mapping[str, Any]]
    approvers: Sequence[str]
    sign_in: bool = False
    """Whether its tool or agent has ``answer_requires_sign_in=True``: its links open the dashboard instead."""


class EventLinks(WireModel):
    """Where a person acts on the event: the run's page on the dashboard, and one-click answers."""

    dashboard: str | None = None
    answers: dict[str, str] = Field(default_factory=dict)
    people: dict[str, dict[str, str]] | None = None
    """Each person's own answers (principal → choice name → URL): the call's approvers, members of its groups
    where known, and the email recipients; each link answers as the person it was made for."""
    buttons: dict[str, str] | None = None
    """The values of an interactive Slack message's answer buttons (choice name → signed token); never sent to a
    webhook."""


class CallView(WireModel):
    """The call an event is about, as clients may see it (arguments and payload through display transforms)."""

    tool_call_id: str
    tool_name: str
    kind: CallKind
    round: int = 0
    position: int | None = None
    """Its place (from 1) among the calls of its tool the model made together, in one step; unset when the model
    made only this one: parallel calls of one tool are told apart by it (and by ``tool_call_id``)."""
    calls_together: int | None = None
    """How many calls of its tool the model made together with it (2 or more; unset for a lone call)."""
    args: Any = None
    suspend_payload: Any = None
    expires_at: datetime | None = None
    approvers: list[str] = Field(default_factory=list)


class AnswerView(WireModel):
    """How a call was answered: ``approve``, ``decline``, ``resume``, ``handoff`` or ``expire``, and by whom."""

    action: str
    answered_by: str | None = None
    expired: bool = False


class RunEnd(WireModel):
    """How the run ended."""

    finish_reason: str
    error: str | None = None


class NotificationEvent(WireModel):
    """One event of a run, as every channel receives it (the webhook's JSON body)."""

    id: str
    type: EventType
    timestamp: datetime
    """When the change happened (the recording activity's clock; the same on its retries only to the second)."""
    run_id: str
    agent_id: str
    call: CallView | None = None
    reminder: int | None = None
    """``call.reminder``: which reminder (1, 2, ...)."""
    escalated_to: list[str] | None = None
    """``call.escalated``: who may answer now."""
    answer: AnswerView | None = None
    """``call.answered`` and ``call.expired``."""
    run: RunEnd | None = None
    """``run.finished``, ``run.failed``, ``run.cancelled``."""
    links: EventLinks = Field(default_factory=EventLinks)


def event_id(run_id: str, event_type: str, *parts: object) -> str:
    """The stable id of an event: the same run, type and parts (call id, round, reminder number, segment) always
    give the same id, whichever attempt computes it."""
    digest = hashlib.sha256("\x1f".join([run_id, event_type, *map(str, parts)]).encode()).hexdigest()
    return f"evt_{digest[:40]}"


def call_label(call: CallView) -> str:
    """The call as a message names it: its tool, and its place among the calls of that tool made together
    (``delete_file (call 2 of 3)``)."""
    if call.position is None or call.calls_together is None:
        return call.tool_name
    return f"{call.tool_name} (call {call.position} of {call.calls_together})"


def dashboard_link(public_url: str | None, run_id: str) -> str | None:
    """The run's page on the dashboard, or ``None`` when no public URL is configured."""
    if not public_url:
        return None
    return f"{public_url.rstrip('/')}/#/runs/{run_id}"
