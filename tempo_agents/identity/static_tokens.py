"""Static bearer tokens: fixed secrets, each naming a principal (development and machines)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from tempo_agents.errors import ConfigurationError
from tempo_agents.identity.principal import Principal

__all__ = ["StaticTokens"]


class StaticTokens:
    """An :class:`~tempo_agents.identity.authenticator.Authenticator` over a fixed set of tokens.

    ``principals``: token → the principal it stands for. A token is compared with every known token in
    constant time, so how long a check takes says nothing about how much of a token was right.
    """

    def __init__(self, principals: Mapping[str, Principal]) -> None:
        if not principals:
            raise ConfigurationError("StaticTokens needs at least one token")
        self._tokens = [(token.encode("latin-1"), principal) for token, principal in principals.items()]

    def find(self, token: str) -> Principal | None:
        """The principal ``token`` stands for, or ``None``."""
        try:
            offered = token.encode("latin-1")
        except UnicodeEncodeError:
            return None
        found = None
        for known, principal in self._tokens:  # every token compared, in constant time
            if hmac.compare_digest(offered, known):
                found = principal
        return found

    async def authenticate(self, token: str) -> Principal | None:
        return self.find(token)
