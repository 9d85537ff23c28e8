"""``GET /identity``: who the request comes from, as the server authenticated it (the dashboard shows it)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel

from tempo_agents.server.auth import identity, principal, principal_groups

__all__ = ["IdentityView", "router"]

router = APIRouter(tags=["identity"])


class IdentityView(BaseModel):
    name: str | None
    """The principal (``None`` when the server asks for no token)."""
    groups: list[str]
    roles: dict[str, list[str]]
    """Tenant (``*``: every tenant) → the roles held there."""


@router.get("/identity", summary="Who the request comes from: its principal, its groups and its roles per tenant")
async def who_am_i(request: Request) -> IdentityView:
    found = identity(request)
    held_roles = found.roles if found is not None else {}
    roles = {tenant: sorted(str(role) for role in held) for tenant, held in held_roles.items()}
    return IdentityView(name=principal(request), groups=principal_groups(request), roles=roles)
