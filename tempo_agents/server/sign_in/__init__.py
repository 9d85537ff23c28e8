"""Signing people in to the dashboard through the organisation's OpenID Connect provider (authorization code with
PKCE), and the sealed session cookie the server's authentication reads."""

from tempo_agents.server.sign_in.provider_client import ProviderClient
from tempo_agents.server.sign_in.routes import sign_in_router
from tempo_agents.server.sign_in.session_cookie import SIGN_IN_PREFIX, Session, SessionCookies

__all__ = ["SIGN_IN_PREFIX", "ProviderClient", "Session", "SessionCookies", "sign_in_router"]
