"""One line of the audit trail: who did what to which tenant's target, how it ended, from where and when.

An :class:`AuditEntry` is what a caller appends; the store gives it its place in the chain and returns an
:class:`AuditRecord`. A change the store cannot make in the same transaction (one Temporal makes) is appended twice:
first as an *intent* (outcome ``pending``) before it is sent, then as a *completion* naming the intent's id
(``completes``) once its outcome is known; a listing shows the intent with its completion's outcome.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = ["DONE", "FAILED", "PENDING", "REFUSED", "AuditEntry", "AuditRecord", "Outcome", "audit_time"]

Outcome = Literal["pending", "done", "refused", "failed"]
"""How an action ended: ``pending`` (an intent not completed yet, or whose process died before it was), ``done``,
``refused`` (with the HTTP status and error code) or ``failed`` (the server's own error)."""

PENDING: Outcome = "pending"
DONE: Outcome = "done"
REFUSED: Outcome = "refused"
FAILED: Outcome = "failed"


def audit_time(moment: datetime | None = None) -> str:
    """A moment as the trail writes it: UTC, ISO 8601 with microseconds and ``Z``; such strings sort by time."""
    when = (moment or datetime.now(UTC)).astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class AuditEntry:
    """An action as it is appended to the trail."""

    action: str
    """What was done: ``start``, ``answer``, ``cancel``, ``schedule.create``, ``sign-in`` …"""
    target: str | None
    """What it was done to: a run id, a schedule id, an agent id, a tool call (``run/toolCallId``) …"""
    outcome: Outcome
    principal: str | None = None
    """Who did it (``None``: nobody signed in, e.g. a refused token)."""
    tenant: str | None = None
    """The run's ``resource`` (``None`` when the target has none)."""
    status: int | None = None
    """The HTTP status of the answer (for ``refused`` and ``failed``, and ``done``)."""
    code: str | None = None
    """The refusal's error code, when the answer carried one."""
    client: str | None = None
    """The client's address."""
    user_agent: str | None = None
    completes: str | None = None
    """The id of the intent this entry completes (``None``: an intent, or an action recorded in one entry)."""
    id: str = field(default_factory=_new_id)
    at: str = field(default_factory=audit_time)

    def fields(self) -> dict[str, Any]:
        """The entry's fields by name (what the chain's hash covers, with the hash before it)."""
        return asdict(self)


@dataclass(frozen=True)
class AuditRecord:
    """An entry at its place in one store's chain: ``seq`` counts from 1; ``prev_hash`` is the hash of the record
    before it (:data:`~tempo_agents.audit.chain.GENESIS` for the first) and ``hash`` its own
    (:func:`~tempo_agents.audit.chain.record_hash`)."""

    seq: int
    entry: AuditEntry
    prev_hash: str
    hash: str

    def wire(self) -> dict[str, Any]:
        """The record as the API, the export and the CLI show it (camelCase names)."""
        e = self.entry
        return {
            "seq": self.seq,
            "id": e.id,
            "at": e.at,
            "principal": e.principal,
            "tenant": e.tenant,
            "action": e.action,
            "target": e.target,
            "outcome": e.outcome,
            "status": e.status,
            "code": e.code,
            "client": e.client,
            "userAgent": e.user_agent,
            "completes": e.completes,
            "prevHash": self.prev_hash,
            "hash": self.hash,
        }
