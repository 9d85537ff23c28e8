"""Roles per tenant as identity providers and tokens files write them, read into a principal's ``roles``.

Two forms are read:

- a list of grants, each ``"tenant:role"`` (``"acme:operator"``, ``"*:admin"``) or a bare ``"role"``, which holds
  in each of ``tenants`` (every tenant when none are given);
- a mapping ``{"tenant": ["role", ...]}`` (``"*"`` for every tenant), or ``{"tenant": "role"}``.

Names that are no role of ours (a provider's own, such as ``offline_access``) are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tempo_agents.errors import ConfigurationError
from tempo_agents.identity.principal import ALL_TENANTS
from tempo_agents.identity.roles import Role

__all__ = ["parse_role_grants", "parse_role_mapping"]

_ROLES = {role.value: role for role in Role}
_KNOWN = ", ".join(_ROLES)


def parse_role_mapping(value: object, holder: str) -> dict[str, frozenset[Role]]:
    """The roles of ``holder`` as a tokens file or the server's ``roles=`` write them: ``{"tenant": ["role", ...]}``
    with every name a role; a :class:`ConfigurationError` naming what is wrong."""
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"the roles of {holder} must map tenants to lists of roles")
    roles: dict[str, frozenset[Role]] = {}
    for tenant, names in value.items():
        if isinstance(names, (str, Mapping)) or not isinstance(names, Iterable):
            raise ConfigurationError(f"the roles of {holder} must map tenants to lists of roles")
        unknown = [name for name in names if not isinstance(name, str) or name not in _ROLES]
        if unknown:
            raise ConfigurationError(f"{holder} holds an unknown role in {tenant}: {unknown[0]} (roles: {_KNOWN})")
        roles[tenant] = frozenset(_ROLES[name] for name in names)
    return roles


def parse_role_grants(value: object, tenants: Iterable[str] = ()) -> dict[str, frozenset[Role]]:
    """A token's roles claim in either form (see the module's docstring); anything unreadable grants nothing."""
    scopes = [tenant for tenant in tenants if tenant] or [ALL_TENANTS]
    grants: dict[str, set[Role]] = {}
    if isinstance(value, str):
        value = value.split()
    if isinstance(value, Mapping):
        for tenant, names in value.items():
            for name in [names] if isinstance(names, str) else names if isinstance(names, list) else []:
                _grant(grants, [str(tenant)], name)
    elif isinstance(value, list):
        for entry in value:
            if isinstance(entry, str):
                tenant, colon, name = entry.rpartition(":")
                _grant(grants, [tenant] if colon and tenant else scopes, name)
    return {tenant: frozenset(held) for tenant, held in grants.items() if held}


def _grant(grants: dict[str, set[Role]], tenants: list[str], name: object) -> None:
    role = _ROLES.get(name) if isinstance(name, str) else None
    if role is not None:
        for tenant in tenants:
            grants.setdefault(tenant, set()).add(role)
