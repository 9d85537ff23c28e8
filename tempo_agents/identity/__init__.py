"""Identity: who a request comes from (:class:`Principal`), the roles it holds per tenant (:class:`Role`), and how a
bearer token is turned into one (static tokens, the OpenID Connect provider's JWTs)."""

from tempo_agents.identity.authenticator import Authenticator, TokenRefused
from tempo_agents.identity.jwt_tokens import JwtBearerTokens, looks_like_jwt
from tempo_agents.identity.oidc_settings import DEFAULT_ALGORITHMS, OidcSettings
from tempo_agents.identity.principal import ALL_TENANTS, Principal
from tempo_agents.identity.provider_keys import ProviderKeys, ProviderUnavailable
from tempo_agents.identity.role_grants import parse_role_grants, parse_role_mapping
from tempo_agents.identity.roles import Role
from tempo_agents.identity.roles_file import RoleTable, load_roles
from tempo_agents.identity.static_tokens import StaticTokens
from tempo_agents.identity.token_claims import principal_from_claims
from tempo_agents.identity.tokens_file import load_token_principals

__all__ = [
    "ALL_TENANTS",
    "DEFAULT_ALGORITHMS",
    "Authenticator",
    "JwtBearerTokens",
    "OidcSettings",
    "Principal",
    "ProviderKeys",
    "ProviderUnavailable",
    "Role",
    "RoleTable",
    "StaticTokens",
    "TokenRefused",
    "load_roles",
    "load_token_principals",
    "looks_like_jwt",
    "parse_role_grants",
    "parse_role_mapping",
    "principal_from_claims",
]
