"""Who a request comes from: a principal, its groups and the roles it holds per tenant."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tempo_agents.identity.roles import Role

__all__ = ["ALL_TENANTS", "Principal"]

ALL_TENANTS = "*"
"""The tenant key of a role held in every tenant (``{"*": {Role.ADMIN}}`` is an administrator everywhere)."""


@dataclass(frozen=True)
class Principal:
    """A signed-in person or machine.

    ``roles`` maps a tenant (a run's ``resource``) to the roles held there; the key :data:`ALL_TENANTS` holds
    roles that apply in every tenant. A principal without roles may do nothing but read what is open to all.
    """

    name: str
    groups: tuple[str, ...] = ()
    roles: Mapping[str, frozenset[Role]] = field(default_factory=dict)

    @classmethod
    def administrator(cls, name: str, groups: Iterable[str] = ()) -> Principal:
        """A principal that is an admin in every tenant (what a static token is unless its roles are given)."""
        return cls(name=name, groups=tuple(groups), roles={ALL_TENANTS: frozenset({Role.ADMIN})})

    def may(self, needed: Role, tenant: str | None) -> bool:
        """Whether the principal holds a role that grants ``needed`` in ``tenant`` (``None``: a run without one)."""
        held = set(self.roles.get(ALL_TENANTS, ()))
        if tenant is not None:
            held |= self.roles.get(tenant, frozenset())
        return any(role.grants(needed) for role in held)

    def tenants_for(self, needed: Role) -> frozenset[str] | None:
        """The tenants in which the principal holds ``needed``; ``None`` when it holds it in every tenant."""
        if any(role.grants(needed) for role in self.roles.get(ALL_TENANTS, ())):
            return None
        return frozenset(
            tenant
            for tenant, held in self.roles.items()
            if tenant != ALL_TENANTS and any(role.grants(needed) for role in held)
        )
