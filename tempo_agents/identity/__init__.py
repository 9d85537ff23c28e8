"""Identity: who a request comes from (:class:`Principal`) and the roles it holds per tenant (:class:`Role`)."""

from tempo_agents.identity.principal import ALL_TENANTS, Principal
from tempo_agents.identity.roles import Role

__all__ = ["ALL_TENANTS", "Principal", "Role"]
