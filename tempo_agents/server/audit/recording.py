"""The intent: a route that changes something records what it is about to do before it does it.

:func:`record_intent` is a dependency every router of the API carries (after the authorization hook, so the
principal is known, and after the body is read): for a route with an action
(:data:`~tempo_agents.server.audit.actions.ROUTE_ACTIONS`) it appends a ``pending`` record and keeps it in
``request.state`` as a :class:`~tempo_agents.server.audit.intents.PendingAction`, which the
:class:`~tempo_agents.server.audit.completion.AuditTrail` middleware completes with the answer's outcome. A store
that cannot take the intent refuses the request (503) before anything changes.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

from fastapi import Request

from tempo_agents.audit import PENDING, AuditEntry
from tempo_agents.client.app import App
from tempo_agents.server.access.visibility import target_tenant
from tempo_agents.server.audit.actions import RouteAction, Seen, action_of
from tempo_agents.server.audit.intents import STATE_KEY, PendingAction, requester, run_resource

__all__ = ["Origin", "action_tenant", "origin", "record_intent", "route_action"]


class Origin(TypedDict):
    """Where a request came from, as its audit records say it."""

    client: str | None
    user_agent: str | None


def origin(request: Request) -> Origin:
    """The request's client address and user agent."""
    client = request.client.host if request.client is not None else None
    return {"client": client, "user_agent": request.headers.get("user-agent")}


def route_action(request: Request) -> RouteAction | None:
    """The action of the route the request matched, or ``None``."""
    return action_of(getattr(request.scope.get("route"), "endpoint", None))


async def _json_body(request: Request) -> Any:
    raw = await request.body()  # the route's own read is cached on the request: this reads nothing again
    if not raw or "json" not in request.headers.get("content-type", "json"):
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return {}


async def action_tenant(request: Request, action: RouteAction, seen: Seen) -> str | None:
    """The tenant ``action`` touches: the one the request names, else its run's, else (a change to a schedule) the
    schedule's. The access guard found each already when it checked the principal's role there, and left it on the
    request even when it refused the request (``target_tenant``): a refusal's record, made without reading the
    body, takes the tenant a start names from there; a run the guard did not look up is described here."""
    tenant = action.tenant(seen) if action.tenant is not None else None
    run_id = action.run(seen) if action.run is not None else None
    if tenant is None and run_id:
        tenant = target_tenant(request) or await run_resource(request.app.state.tempo_app, run_id)
    if tenant is None and (action.guarded_tenant or action.tenant is not None):
        tenant = target_tenant(request)
    return tenant


async def record_intent(request: Request) -> None:
    """Record the intent of the route's action, if it has one (module docstring)."""
    action = route_action(request)
    if action is None:
        return
    seen = Seen.of(request, await _json_body(request))
    app: App = request.app.state.tempo_app
    tenant = await action_tenant(request, action, seen)
    intent = AuditEntry(
        action=action.name(seen),
        target=action.target(seen),
        outcome=PENDING,
        principal=requester(request),
        tenant=tenant,
        **origin(request),
    )
    await app.store.append_audit([intent])
    setattr(request.state, STATE_KEY, PendingAction(intent, intent.target, intent.principal, tenant))
