"""The principal of a request: the one sign-in set, or the one made from the bearer token and the server's roles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fastapi import Request

from tempo_agents.errors import ConfigurationError
from tempo_agents.identity import Principal, Role
from tempo_agents.server.auth import principal, principal_groups

__all__ = ["ANONYMOUS", "RoleGrants", "parse_role_grants", "request_principal"]

ANONYMOUS = "anonymous"
"""The name of the principal of a server without tokens (an administrator everywhere, for development)."""

RoleGrants = Mapping[str, Mapping[str, Sequence[str]]]
"""principal name → tenant → role names (``{"alice": {"acme": ["operator"], "globex": ["viewer"]}}``)."""


def parse_role_grants(grants: RoleGrants) -> dict[str, dict[str, frozenset[Role]]]:
    """The roles of each principal, checked: an unknown role name is a ``ConfigurationError`` naming it."""
    parsed: dict[str, dict[str, frozenset[Role]]] = {}
    known = ", ".join(role.value for role in Role)
    for name, tenants in grants.items():
        parsed[name] = {}
        for tenant, roles in tenants.items():
            unknown = [role for role in roles if role not in {held.value for held in Role}]
            if unknown:
                raise ConfigurationError(f"{name} holds an unknown role in {tenant}: {unknown[0]} (roles: {known})")
            parsed[name][tenant] = frozenset(Role(role) for role in roles)
    return parsed


def request_principal(request: Request) -> Principal:
    """Who sent the request, with the roles they hold.

    Sign-in sets ``request.state.identity``; without it, the bearer token's name, its groups and the server's
    ``roles`` make one (a name missing from the roles holds none). Without ``roles`` every token holder is an
    administrator everywhere; without tokens, so is everyone (as :data:`ANONYMOUS`).
    """
    identity = getattr(request.state, "identity", None)
    if isinstance(identity, Principal):
        return identity
    name = principal(request)
    grants: dict[str, dict[str, frozenset[Role]]] | None = getattr(request.app.state, "role_grants", None)
    if name is None:
        return Principal.administrator(ANONYMOUS)
    groups = tuple(principal_groups(request))
    if grants is None:
        return Principal.administrator(name, groups)
    return Principal(name=name, groups=groups, roles=grants.get(name, {}))
