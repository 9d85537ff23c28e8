"""``GET /audit``: the audit trail's actions, newest first, filtered and paged by cursor.

A request signed in through the identity provider (``request.state.identity``) sees the records of the tenants in
which it may view runs, all of them when it may everywhere (an admin); a request without one is the server's own
principal (a static token, or no tokens at all), which sees everything, as it may do everything.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from tempo_agents.audit import AuditQuery, parse_audit_time
from tempo_agents.identity import Principal, Role
from tempo_agents.server.dependencies import PRINTABLE, AppDep
from tempo_agents.server.errors import ApiError

__all__ = ["router", "since_time", "visible_tenants"]

router = APIRouter(prefix="/audit", tags=["audit"])

Filter = Annotated[str | None, Query(pattern=PRINTABLE, max_length=1000)]


def since_time(value: str | None, name: str) -> str | None:
    """The query's ``name`` as the trail writes times (:func:`~tempo_agents.audit.parse_audit_time`); 400 if not one."""
    try:
        return parse_audit_time(value)
    except ValueError:
        raise ApiError(400, f"{name} must be an ISO 8601 time, e.g. 2026-01-31T12:00:00Z") from None


def visible_tenants(request: Request) -> frozenset[str] | None:
    """The tenants whose records the request may read (``None``: all; module docstring)."""
    identity = getattr(request.state, "identity", None)
    return identity.tenants_for(Role.VIEWER) if isinstance(identity, Principal) else None


def _cursor(value: str | None) -> int | None:
    if value is None:
        return None
    if not (value.isascii() and value.isdigit() and len(value) <= 18):  # a seq, within a signed 64-bit integer
        raise ApiError(400, "cursor must be the nextCursor of the previous page")
    return int(value)


@router.get("", summary="Actions that changed something: who, what, which tenant, how it ended; newest first")
async def audit_records(
    app: AppDep,
    request: Request,
    principal: Filter = None,
    tenant: Filter = None,
    action: Filter = None,
    target: Filter = None,
    since: Annotated[str | None, Query(description="ISO 8601 time, included")] = None,
    until: Annotated[str | None, Query(description="ISO 8601 time, excluded")] = None,
    per_page: Annotated[int, Query(alias="perPage", ge=1, le=1000)] = 50,
    cursor: Annotated[str | None, Query(description="nextCursor of the previous page")] = None,
) -> dict[str, Any]:
    query = AuditQuery(
        principal=principal,
        tenant=tenant,
        action=action,
        target=target,
        since=since_time(since, "since"),
        until=since_time(until, "until"),
        tenants=visible_tenants(request),
        before=_cursor(cursor),
        limit=per_page,
    )
    actions = await app.store.audit_actions(query)
    more = len(actions) == per_page
    return {
        "records": [found.wire() for found in actions],
        "nextCursor": str(actions[-1].record.seq) if more else None,
    }
