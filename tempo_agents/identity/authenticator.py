"""What turns a bearer token into a principal, and the refusal it raises for a token it rejects."""

from __future__ import annotations

from typing import Protocol

from tempo_agents.errors import TempoAgentsError
from tempo_agents.identity.principal import Principal

__all__ = ["Authenticator", "TokenRefused"]


class TokenRefused(TempoAgentsError):
    """A token that was offered and is not accepted; ``message`` says why (it is shown to the caller)."""

    code = "TOKEN_REFUSED"


class Authenticator(Protocol):
    """Turns a bearer token into the :class:`Principal` it stands for.

    ``authenticate`` returns ``None`` for a token that is none of its kind (another authenticator may know it),
    and raises :class:`TokenRefused` for one of its kind that it rejects (expired, forged, for a disabled
    principal).
    """

    async def authenticate(self, token: str) -> Principal | None: ...
