"""The principal of a request: the one sign-in set, or the one made from the bearer token and the server's roles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fastapi import Request

from tempo_agents.identity import Principal, Role
from tempo_agents.server.auth import principal, principal_groups

__all__ = ["ANONYMOUS", "RoleGrants", "request_principal"]

ANONYMOUS = "anonymous"
"""The name of the principal of a server without tokens (an administrator everywhere, for development)."""

RoleGrants = Mapping[str, Mapping[str, Sequence[str]]]
"""principal name → tenant → role names (``{"alice": {"acme": ["operator"], "globex": ["viewer"]}}``)."""


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
