"""The dashboard's sign-in session: who signed in, until when, and the provider's refresh token, sealed into a
cookie (encrypted and authenticated with Fernet, so the browser can neither read nor change it).

The cookie is ``HttpOnly`` (no script reads it), ``SameSite=Lax`` (a request another site makes carries it only for
a top-level navigation, never a cross-site POST) and ``Secure`` when the dashboard is served over HTTPS. The
short-lived login cookie carries the flow's state, PKCE verifier and nonce between the login and the callback.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
import time
from dataclasses import asdict, dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from starlette.responses import Response
from starlette.types import Scope

from tempo_agents.identity import Principal, Role

__all__ = ["LOGIN_COOKIE", "SESSION_COOKIE", "SIGN_IN_PREFIX", "LoginState", "Session", "SessionCookies"]

SIGN_IN_PREFIX = "/auth"
"""Where the sign-in routes are served; the login cookie goes only to them."""
SESSION_COOKIE = "tempo_agents_session"
LOGIN_COOKIE = "tempo_agents_login"
_LOGIN_PATH = f"{SIGN_IN_PREFIX}/"
_LOGIN_SECONDS = 600
_COOKIE_LIMIT = 4000
_log = logging.getLogger("tempo_agents.server.sign_in")
_SESSION_COOKIE_SECONDS = 30 * 24 * 3600  # the cookie outlives the session so its refresh token can renew it


@dataclass(frozen=True)
class Session:
    """A signed-in person: the principal the ID token named, when the session ends (the token's ``exp``), and what
    renews it."""

    name: str
    subject: str
    """The ID token's ``sub``: a renewal must name the same subject."""
    groups: list[str]
    roles: dict[str, list[str]]
    expires_at: float
    refresh_token: str | None = None

    @classmethod
    def of(cls, principal: Principal, *, subject: str, expires_at: float, refresh_token: str | None) -> Session:
        """The session of ``principal`` (the ID token itself is not kept: a browser refuses cookies over 4 KB)."""
        roles = {tenant: sorted(str(role) for role in held) for tenant, held in principal.roles.items()}
        return cls(principal.name, subject, list(principal.groups), roles, expires_at, refresh_token)

    @property
    def principal(self) -> Principal:
        roles = {tenant: frozenset(Role(name) for name in names) for tenant, names in self.roles.items()}
        return Principal(name=self.name, groups=tuple(self.groups), roles=roles)

    def ended(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) >= self.expires_at


@dataclass(frozen=True)
class LoginState:
    """What the callback checks: the ``state`` sent to the provider, the PKCE verifier, the nonce, where to go."""

    state: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    nonce: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    next: str = "/"

    @property
    def challenge(self) -> str:
        """The PKCE ``code_challenge`` (S256) of the verifier."""
        digest = hashlib.sha256(self.verifier.encode()).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class SessionCookies:
    """Seals and opens the session and login cookies with a key derived from ``secret`` (random when ``None``: the
    sessions then end when the server restarts)."""

    def __init__(self, secret: str | None) -> None:
        material = secret.encode() if secret else secrets.token_bytes(32)
        key = base64.urlsafe_b64encode(hashlib.sha256(b"tempo-agents session\0" + material).digest())
        self._fernet = Fernet(key)

    def principal_of(self, scope: Scope) -> Principal | None:
        """The principal of the request's session, while it lasts (the middleware's session reader)."""
        found = self.session_of(scope)
        return found.principal if found is not None and not found.ended() else None

    def session_of(self, scope: Scope) -> Session | None:
        """The request's session, ended or not; ``None`` without a cookie that opens."""
        opened = self._open(_cookie(scope, SESSION_COOKIE), max_age=_SESSION_COOKIE_SECONDS)
        try:
            return Session(**opened) if opened is not None else None
        except TypeError:
            return None

    def login_of(self, scope: Scope) -> LoginState | None:
        opened = self._open(_cookie(scope, LOGIN_COOKIE), max_age=_LOGIN_SECONDS)
        try:
            return LoginState(**opened) if opened is not None else None
        except TypeError:
            return None

    def set_session(self, response: Response, session: Session, *, secure: bool) -> None:
        sealed = self._seal(asdict(session))
        if len(sealed) > _COOKIE_LIMIT:
            _log.warning(
                "the session cookie of %s is %d bytes, more than browsers keep (%d): the principal has too many groups "
                "or roles in its token; sign-in will not last",
                session.name,
                len(sealed),
                _COOKIE_LIMIT,
            )
        response.set_cookie(
            SESSION_COOKIE,
            sealed,
            max_age=_SESSION_COOKIE_SECONDS,
            httponly=True,
            secure=secure,
            samesite="lax",
            path="/",
        )

    def set_login(self, response: Response, login: LoginState, *, secure: bool) -> None:
        response.set_cookie(
            LOGIN_COOKIE,
            self._seal(asdict(login)),
            max_age=_LOGIN_SECONDS,
            httponly=True,
            secure=secure,
            samesite="lax",
            path=_LOGIN_PATH,
        )

    @staticmethod
    def clear(response: Response, *, secure: bool) -> None:
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, secure=secure, samesite="lax")
        response.delete_cookie(LOGIN_COOKIE, path=_LOGIN_PATH, httponly=True, secure=secure, samesite="lax")

    @staticmethod
    def clear_login(response: Response) -> None:
        """Delete the login cookie (the callback's, once the sign-in it carried is done)."""
        response.delete_cookie(LOGIN_COOKIE, path=_LOGIN_PATH)

    def _seal(self, value: dict[str, Any]) -> str:
        return self._fernet.encrypt(json.dumps(value, separators=(",", ":")).encode()).decode()

    def _open(self, sealed: str | None, *, max_age: int) -> dict[str, Any] | None:
        if not sealed:
            return None
        try:
            loaded = json.loads(self._fernet.decrypt(sealed.encode(), ttl=max_age))
        except (InvalidToken, ValueError):
            return None
        return loaded if isinstance(loaded, dict) else None


def _cookie(scope: Scope, name: str) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except CookieError:  # a malformed Cookie header is no session
                return None
            if name in jar:
                return jar[name].value
    return None
