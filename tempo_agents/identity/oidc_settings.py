"""How the server trusts an OpenID Connect provider: its issuer, the audience, the claims it reads.

Checked when made, so a wrong setting fails when the server starts, not on the first request. The command line
reads them from its options and the environment variables named in ``ENVIRONMENT`` (:meth:`OidcSettings.from_values`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tempo_agents.errors import ConfigurationError

__all__ = ["DEFAULT_ALGORITHMS", "ENVIRONMENT", "OidcSettings"]

DEFAULT_ALGORITHMS = ("RS256", "ES256", "PS256")
"""Asymmetric signatures only: a token signed with ``none`` or an HMAC (``HS256`` …) is never accepted."""

_ACCEPTABLE_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)

ENVIRONMENT = {
    "issuer": "TEMPO_AGENTS_OIDC_ISSUER",
    "audience": "TEMPO_AGENTS_OIDC_AUDIENCE",
    "algorithms": "TEMPO_AGENTS_OIDC_ALGORITHMS",
    "leeway_seconds": "TEMPO_AGENTS_OIDC_LEEWAY",
    "principal_claim": "TEMPO_AGENTS_OIDC_PRINCIPAL_CLAIM",
    "groups_claim": "TEMPO_AGENTS_OIDC_GROUPS_CLAIM",
    "roles_claim": "TEMPO_AGENTS_OIDC_ROLES_CLAIM",
    "tenants_claim": "TEMPO_AGENTS_OIDC_TENANTS_CLAIM",
    "disabled": "TEMPO_AGENTS_OIDC_DISABLED",
    "client_id": "TEMPO_AGENTS_OIDC_CLIENT_ID",
    "client_secret": "TEMPO_AGENTS_OIDC_CLIENT_SECRET",
    "session_secret": "TEMPO_AGENTS_SESSION_SECRET",
}
"""The environment variable of each setting (lists are comma-separated)."""

_LISTS = frozenset({"audience", "algorithms", "disabled"})


@dataclass(frozen=True)
class OidcSettings:
    """An OpenID Connect provider whose JWTs the server accepts as bearer tokens (and, with ``client_id``, through
    which the dashboard signs people in)."""

    issuer: str
    """The provider's issuer URL, exactly as its tokens' ``iss`` says it; its keys are found from
    ``{issuer}/.well-known/openid-configuration``."""
    audience: str | Sequence[str]
    """The ``aud`` a token must carry (one of several, when a sequence)."""
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS
    """The signature algorithms accepted; asymmetric ones only."""
    leeway_seconds: float = 30.0
    """How far ``exp`` and ``nbf`` may be off, for clocks that differ."""
    principal_claim: str = "sub"
    """The claim naming the principal (``sub``, ``email``, ``preferred_username`` …); a dotted path reads nested
    claims."""
    groups_claim: str | None = "groups"
    """The claim listing the principal's groups (``None``: none read)."""
    roles_claim: str | None = "roles"
    """The claim holding its roles: ``["acme:operator", "*:admin"]``, bare ``["viewer"]`` or ``{"acme": ["operator"]}``
    (a dotted path such as ``realm_access.roles`` reads nested claims)."""
    tenants_claim: str | None = None
    """The claim listing the tenants a bare role holds in (without it, a bare role holds in every tenant)."""
    disabled: frozenset[str] = field(default_factory=frozenset)
    """Principals refused even with a valid token."""
    jwks_refresh_seconds: float = 60.0
    """At most one fetch of the provider's keys in this interval when a token names a key not yet known."""
    jwks_max_age_seconds: float = 3600.0
    """How long fetched keys are used before they are fetched again."""
    client_id: str | None = None
    """The dashboard's client at the provider: with it, the dashboard signs people in (authorization code, PKCE)."""
    client_secret: str | None = None
    """The client's secret, for a confidential client (``None``: a public client)."""
    scopes: Sequence[str] = ("openid", "profile", "email")
    """The scopes the dashboard asks for (``offline_access`` too, where the provider wants it for a refresh token)."""
    session_secret: str | None = None
    """The key sealing the dashboard's session cookie; sessions outlive a restart only when it is set (otherwise a
    random key is made when the server starts)."""

    def __post_init__(self) -> None:
        parts = urlsplit(self.issuer)
        if parts.scheme not in ("https", "http") or not parts.netloc:
            raise ConfigurationError(f"the OpenID Connect issuer must be an http(s) URL, not {self.issuer!r}")
        if not self.audiences:
            raise ConfigurationError("the OpenID Connect settings need an audience (the aud tokens carry)")
        if not self.algorithms:
            raise ConfigurationError("the OpenID Connect settings need at least one algorithm")
        refused = [name for name in self.algorithms if name not in _ACCEPTABLE_ALGORITHMS]
        if refused:
            raise ConfigurationError(
                f"refusing the signature algorithm(s) {', '.join(refused)}: only asymmetric ones are accepted "
                f"({', '.join(sorted(_ACCEPTABLE_ALGORITHMS))}), never none or HMAC"
            )
        if self.leeway_seconds < 0 or self.leeway_seconds > 300:
            raise ConfigurationError("the OpenID Connect leeway must be between 0 and 300 seconds")
        if not self.principal_claim:
            raise ConfigurationError("the OpenID Connect principal claim cannot be empty")

    @property
    def audiences(self) -> list[str]:
        """The accepted audiences as a list."""
        found = [self.audience] if isinstance(self.audience, str) else list(self.audience)
        return [audience for audience in found if audience]

    @property
    def discovery_url(self) -> str:
        """Where the provider describes itself."""
        return self.issuer.rstrip("/") + "/.well-known/openid-configuration"

    @classmethod
    def from_values(cls, values: Mapping[str, str]) -> OidcSettings:
        """Settings from text values (the command line's, the environment's): lists comma-separated."""
        if not values.get("audience"):
            raise ConfigurationError(
                f"an OpenID Connect issuer needs an audience: --oidc-audience or {ENVIRONMENT['audience']}"
            )
        kept: dict[str, object] = {}
        for name, text in values.items():
            if name in _LISTS:
                items = [item.strip() for item in text.split(",") if item.strip()]
                kept[name] = frozenset(items) if name == "disabled" else tuple(items)
            elif name == "leeway_seconds":
                kept[name] = _seconds(text)
            else:
                kept[name] = text
        return cls(**kept)  # type: ignore[arg-type]


def _seconds(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ConfigurationError(f"the OpenID Connect leeway must be a number of seconds, not {text!r}") from None
