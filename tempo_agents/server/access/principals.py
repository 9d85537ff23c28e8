"""The principal of a request: the one sign-in set, or the one made from the bearer token and the server's roles."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from fastapi import Request

from tempo_agents.identity import Principal, Role
from tempo_agents.server.auth import principal, principal_groups

__all__ = ["ANONYMOUS", "RoleGrants", "granted_principal", "request_principal"]

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
    if name is None:
        return Principal.administrator(ANONYMOUS)
    return granted_principal(name, principal_groups(request), getattr(request.app.state, "role_grants", None))


def granted_principal(
    name: str, groups: Iterable[str], grants: Mapping[str, Mapping[str, frozenset[Role]]] | None
) -> Principal:
    """``name`` with ``groups`` and the roles ``grants`` (principal → tenant → roles) give it, none when it is missing
    from them; without ``grants``, an administrator everywhere."""
    if grants is None:
        return Principal.administrator(name, groups)
    return Principal(name=name, groups=tuple(groups), roles=grants.get(name, {}))
