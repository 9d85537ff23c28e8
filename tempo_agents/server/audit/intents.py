"""A recorded intent as the request carries it (:class:`PendingAction`, put in ``request.state`` by
:func:`~tempo_agents.server.audit.recording.record_intent`), and what a route may add to it: what it learnt after
(:func:`note_audit`), or its completion written in the route's own transaction (:func:`completion_entries`, then
:func:`mark_completed`) when its change is the store's."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace

from fastapi import Request
from temporalio.service import RPCError

from tempo_agents.audit import DONE, REFUSED, AuditEntry, Outcome, audit_time
from tempo_agents.client.app import App
from tempo_agents.identity import Principal
from tempo_agents.server.access.tenants import run_tenant
from tempo_agents.server.auth import principal

__all__ = [
    "STATE_KEY",
    "PendingAction",
    "completion_entries",
    "mark_completed",
    "note_audit",
    "note_refusal",
    "pending_action",
    "requester",
    "run_resource",
]

STATE_KEY = "audit_action"
"""Where the request's :class:`PendingAction` is kept in ``request.state`` (the ASGI scope's ``state``)."""


@dataclass
class PendingAction:
    """An action whose intent was recorded: what its completion will say, and whether it was completed already."""

    intent: AuditEntry
    target: str | None
    principal: str | None
    tenant: str | None
    completed: bool = False
    refusal: str | None = None
    """The code of a refusal the route noted (:func:`note_refusal`): the completion says ``refused`` even for a 2xx
    answer."""

    def completion(self, outcome: Outcome, status: int | None, code: str | None) -> AuditEntry:
        """The record that completes the intent with this outcome."""
        if self.refusal is not None:
            outcome, code = (REFUSED if outcome == DONE else outcome), code or self.refusal
        return replace(
            self.intent,
            outcome=outcome,
            status=status,
            code=code,
            target=self.target,
            principal=self.principal,
            tenant=self.tenant,
            completes=self.intent.id,
            id=uuid.uuid4().hex,
            at=audit_time(),
        )


def requester(request: Request) -> str | None:
    """Who sent the request: the signed-in identity's name when sign-in put one in ``request.state.identity``,
    else the bearer token's principal."""
    identity = getattr(request.state, "identity", None)
    return identity.name if isinstance(identity, Principal) else principal(request)


async def run_resource(app: App, run_id: str) -> str | None:
    """The run's tenant (:func:`~tempo_agents.server.access.tenants.run_tenant`); ``None`` for a run without one, one
    not found, or when Temporal cannot say."""
    try:
        return (await run_tenant(app, run_id)).tenant
    except RPCError:
        return None


def pending_action(request: Request) -> PendingAction | None:
    """The request's recorded intent, if its route recorded one."""
    found = getattr(request.state, STATE_KEY, None)
    return found if isinstance(found, PendingAction) else None


async def note_audit(
    request: Request, *, target: str | None = None, principal: str | None = None, run: str | None = None
) -> None:
    """What the route learnt after the intent was recorded (the run it started, the principal of an answer link),
    for its completion; with ``run``, the run's tenant too."""
    pending = pending_action(request)
    if pending is None:
        return
    pending.target = target or pending.target
    pending.principal = principal or pending.principal
    if run and pending.tenant is None:
        pending.tenant = await run_resource(request.app.state.tempo_app, run)


def note_refusal(request: Request, code: str) -> None:
    """The route refused the action though its answer may be a 2xx (a Slack click is answered 200, so that Slack
    shows the clicker why): its completion says ``refused`` with ``code``."""
    pending = pending_action(request)
    if pending is not None:
        pending.refusal = code


def completion_entries(request: Request, status: int = 200) -> list[AuditEntry]:
    """The completion of the request's action as done, for the route to write in its change's transaction (none
    when no intent was recorded); :func:`mark_completed` once that transaction committed."""
    pending = pending_action(request)
    return [] if pending is None else [pending.completion(DONE, status, None)]


def mark_completed(request: Request) -> None:
    """The route wrote the completion itself: the middleware writes none."""
    pending = pending_action(request)
    if pending is not None:
        pending.completed = True
