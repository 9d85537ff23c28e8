"""JWT bearer tokens from the organisation's OpenID Connect provider, verified with PyJWT against its keys.

A token is checked for its algorithm (the allow-list, before any key is looked at: ``none`` and HMAC never pass),
its key (:class:`ProviderKeys`), its signature, ``iss``, ``aud``, ``exp`` and ``nbf`` (with the settings' leeway);
then its claims name the principal (:func:`principal_from_claims`). Each refusal says which check failed.
"""

from __future__ import annotations

import httpx
import jwt

from tempo_agents.identity.authenticator import TokenRefused
from tempo_agents.identity.oidc_settings import OidcSettings
from tempo_agents.identity.principal import Principal
from tempo_agents.identity.provider_keys import ProviderKeys
from tempo_agents.identity.token_claims import principal_from_claims

__all__ = ["JwtBearerTokens", "looks_like_jwt"]


def looks_like_jwt(token: str) -> bool:
    """Whether ``token`` has a JWT's shape (three dot-separated parts), so a JWT verifier should judge it."""
    return token.count(".") == 2


class JwtBearerTokens:
    """An :class:`~tempo_agents.identity.authenticator.Authenticator` for the provider's JWTs, checked against
    ``keys`` (those of another verifier of the same provider, for another audience; by default its own)."""

    def __init__(
        self, settings: OidcSettings, *, http: httpx.AsyncClient | None = None, keys: ProviderKeys | None = None
    ) -> None:
        self.settings = settings
        self.keys = keys or ProviderKeys(settings, http=http)

    async def authenticate(self, token: str) -> Principal | None:
        if not looks_like_jwt(token):
            return None
        return principal_from_claims(await self.verify(token), self.settings)

    async def verify(self, token: str) -> dict[str, object]:
        """The claims of ``token`` once every check passed; :class:`TokenRefused` naming the first that failed."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRefused("The token is malformed: it is not a JWT") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.settings.algorithms:
            raise TokenRefused(
                f"The token's signature algorithm {algorithm!r} is not accepted "
                f"(accepted: {', '.join(self.settings.algorithms)})"
            )
        kid = header.get("kid")
        key = await self.keys.key(kid if isinstance(kid, str) else None)
        try:
            claims: dict[str, object] = jwt.decode(
                token,
                key=key,
                algorithms=[algorithm],
                audience=self.settings.audiences,
                issuer=self.settings.issuer,
                leeway=self.settings.leeway_seconds,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as error:
            raise TokenRefused(_refusal(error)) from None
        return claims


def _refusal(error: jwt.PyJWTError) -> str:
    if isinstance(error, jwt.ExpiredSignatureError):
        return "The token has expired"
    if isinstance(error, jwt.ImmatureSignatureError):
        return "The token is not valid yet"
    if isinstance(error, jwt.InvalidAudienceError):
        return "The token is meant for another audience"
    if isinstance(error, jwt.InvalidIssuerError):
        return "The token comes from another issuer"
    if isinstance(error, jwt.InvalidSignatureError):
        return "The token's signature does not verify"
    if isinstance(error, jwt.MissingRequiredClaimError):
        return f"The token lacks the {error.claim} claim"
    if isinstance(error, jwt.InvalidAlgorithmError):
        return "The token's signature algorithm does not match its key"
    return f"The token is malformed: {error}"
