"""A verified token's claims read into a :class:`Principal`, through the claims the settings name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tempo_agents.identity.authenticator import TokenRefused
from tempo_agents.identity.oidc_settings import OidcSettings
from tempo_agents.identity.principal import Principal
from tempo_agents.identity.role_grants import parse_role_grants

__all__ = ["claim", "principal_from_claims"]


def claim(claims: Mapping[str, Any], path: str) -> object:
    """The claim at ``path``: a name, or a dotted path into nested objects (``realm_access.roles``); a claim whose
    own name holds the dots wins."""
    if path in claims:
        return claims[path]
    found: object = claims
    for part in path.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found


def principal_from_claims(claims: Mapping[str, Any], settings: OidcSettings) -> Principal:
    """The principal a verified token stands for; :class:`TokenRefused` without a name, or for a disabled one."""
    name = claim(claims, settings.principal_claim)
    if not isinstance(name, str) or not name:
        raise TokenRefused(f"The token has no {settings.principal_claim} claim naming the principal")
    if name in settings.disabled:
        raise TokenRefused(f"The principal {name} is disabled")
    groups = _strings(claim(claims, settings.groups_claim)) if settings.groups_claim else []
    tenants = _strings(claim(claims, settings.tenants_claim)) if settings.tenants_claim else []
    roles = parse_role_grants(claim(claims, settings.roles_claim), tenants) if settings.roles_claim else {}
    return Principal(name=name, groups=tuple(groups), roles=roles)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str) and item]
    return []
