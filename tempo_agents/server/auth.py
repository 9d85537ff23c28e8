"""Access control: bearer tokens and sign-in sessions that name principals, and a hook that runs before every route.

With tokens configured (``create_server(app, tokens={"secret": "alice"})``; on the command line
``--auth-token``, ``TEMPO_AGENTS_API_TOKEN`` or ``--tokens-file``) or an OpenID Connect provider
(``create_server(app, oidc=OidcSettings(...))``) every request but ``GET /api/health``
(and CORS preflights) must carry ``Authorization: Bearer <token>`` (or, for the dashboard, its sign-in session
cookie), or it is answered 401 ``{"error": ...}`` before any route runs; ``/openapi.json`` and the docs are
covered too. :class:`Authentication` is that one place: it sets ``request.state.principal`` (the name: the one
recorded as ``answeredBy`` with every resume, approval and decline it sends) and ``request.state.identity`` (the
:class:`~tempo_agents.identity.Principal`, with its groups and roles per tenant).

A principal may belong to groups (``create_server(groups={"alice": ["finance"]})``, a tokens file's groups, or a
JWT's groups claim): its answers carry them, and a call assigned to ``group:finance`` accepts them.

``authorize=`` is a further hook (a function that raises :class:`ApiError`, 401 or 403, for requests it
refuses); it may set ``request.state.principal`` itself. The roles a principal holds in each tenant, and the guard
every route passes through, are ``server/access/``'s.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from fastapi import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tempo_agents.errors import ConfigurationError
from tempo_agents.identity import (
    Authenticator,
    Principal,
    ProviderUnavailable,
    StaticTokens,
    TokenRefused,
    load_token_principals,
)

__all__ = [
    "Authentication",
    "Authorize",
    "BearerTokens",
    "SessionReader",
    "add_groups",
    "allow_all",
    "authorization_dependency",
    "identity",
    "load_token_groups",
    "load_tokens_file",
    "named_groups",
    "principal",
    "principal_groups",
]

Authorize = Callable[[Request], Awaitable[None] | None]
"""Decides whether a request may go on: returns to allow it, raises ``ApiError`` to refuse it."""


def allow_all(request: Request) -> None:
    """The default: every request is allowed."""


def principal(request: Request) -> str | None:
    """Who sent the request: the name of its bearer token (``None`` when the server has no tokens)."""
    name = getattr(request.state, "principal", None)
    return name if isinstance(name, str) else None


def identity(request: Request) -> Principal | None:
    """Who sent the request, with its groups and roles per tenant (``None`` when the server asks for no token)."""
    found = getattr(request.state, "identity", None)
    return found if isinstance(found, Principal) else None


def principal_groups(request: Request) -> list[str]:
    """The groups the request's principal belongs to: its token's (a JWT's groups claim) and the server's
    ``groups`` (e.g. from its tokens file)."""
    name = principal(request)
    if name is None:
        return []
    found = identity(request)
    held = list(found.groups) if found is not None and found.name == name else []
    return add_groups(held, _server_groups(request, name))


def add_groups(held: list[str], groups: Iterable[str]) -> list[str]:
    """``held``, with each of ``groups`` not already in it added at its end."""
    held.extend(group for group in groups if group not in held)
    return held


def named_groups(request: Request, name: str) -> list[str]:
    """The groups of ``name``, a principal the request names without its token (an answer link's, a Slack user's):
    the server's (e.g. its tokens file's) and the served App's."""
    app_groups: Mapping[str, Sequence[str]] = request.app.state.tempo_app.groups
    return [*_server_groups(request, name), *app_groups.get(name, [])]


def _server_groups(request: Request, name: str) -> Sequence[str]:
    groups: Mapping[str, Sequence[str]] = getattr(request.app.state, "principal_groups", {})
    return groups.get(name, [])


class SessionReader(Protocol):
    """Finds the principal of a request's sign-in session cookie (the dashboard's); ``None`` without one."""

    def principal_of(self, scope: Scope) -> Principal | None: ...


class Authentication:
    """ASGI middleware, the one place requests pass through: every HTTP request but the open paths needs a
    bearer token one of ``authenticators`` accepts, or a sign-in session ``sessions`` reads.

    A refused token is answered 401 ``{"error": "<why>"}`` with ``WWW-Authenticate: Bearer error="invalid_token"``
    and nothing else runs; a provider whose keys cannot be fetched, 503.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticators: Sequence[Authenticator],
        sessions: SessionReader | None = None,
        open_paths: Iterable[str] = (),
        judges_any_token: bool = False,
    ) -> None:
        """``open_paths``: paths served without a token; one ending in ``/`` opens everything under it.
        ``judges_any_token``: whether a token no authenticator knows is refused as malformed (with a JWT verifier)
        rather than as unknown (static tokens only, the messages they always had)."""
        if not authenticators:
            raise ConfigurationError("Authentication needs at least one authenticator")
        self.app = app
        self._authenticators = list(authenticators)
        self._sessions = sessions
        self._judges_any_token = judges_any_token
        paths = list(open_paths)
        self._open = frozenset(path for path in paths if not path.endswith("/") or path == "/")
        self._open_prefixes = tuple(path for path in paths if path.endswith("/") and path != "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path in self._open or path.startswith(self._open_prefixes):
            await self.app(scope, receive, send)
            return
        try:
            found = await self._principal(scope)
        except TokenRefused as refusal:
            await _refuse(refusal.message, scope, receive, send, invalid_token=True)
            return
        except ProviderUnavailable as error:
            await JSONResponse({"error": error.message}, status_code=503)(scope, receive, send)
            return
        if found is None:
            has_header = _authorization(scope) is not None
            message = "Invalid or expired token" if has_header else "Authentication required"
            await _refuse(message, scope, receive, send, invalid_token=False)
            return
        state = scope.setdefault("state", {})
        state["principal"] = found.name
        state["identity"] = found
        await self.app(scope, receive, send)

    async def _principal(self, scope: Scope) -> Principal | None:
        header = _authorization(scope)
        if header is None:
            return self._sessions.principal_of(scope) if self._sessions is not None else None
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        for authenticator in self._authenticators:
            found = await authenticator.authenticate(token)
            if found is not None:
                return found
        if self._judges_any_token:
            raise TokenRefused("The token is malformed: it is neither a known token nor a JWT")
        return None


def _authorization(scope: Scope) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == b"authorization":
            return str(value.decode("latin-1"))
    return None


async def _refuse(message: str, scope: Scope, receive: Receive, send: Send, *, invalid_token: bool) -> None:
    challenge = 'Bearer error="invalid_token"' if invalid_token else "Bearer"
    response = JSONResponse({"error": message}, status_code=401, headers={"WWW-Authenticate": challenge})
    await response(scope, receive, send)


def load_tokens_file(path: str | Path) -> dict[str, str]:
    """Tokens and the principals they name, from a file: a JSON object ``{"token": "name"}`` (or
    ``{"token": {"name": "alice", "groups": ["finance"], "roles": {"acme": ["operator"]}}}``), or lines
    ``token name`` or ``token name group,group`` (blank lines and ``#`` comments skipped). The groups are read by
    :func:`load_token_groups`, the whole principals by :func:`~tempo_agents.identity.load_token_principals`."""
    return {token: principal.name for token, principal in load_token_principals(path).items()}


def load_token_groups(path: str | Path) -> dict[str, list[str]]:
    """The groups of each principal a tokens file names (principal → group names; only those with groups)."""
    groups: dict[str, list[str]] = {}
    for principal in load_token_principals(path).values():
        if principal.groups:
            add_groups(groups.setdefault(principal.name, []), principal.groups)
    return groups


class BearerTokens(Authentication):
    """The static-token middleware of earlier releases, kept for code that builds it itself:
    ``BearerTokens(app, tokens={"token": "alice"}, open_paths=[...])``. Deprecated: use :class:`Authentication` with
    :class:`~tempo_agents.identity.StaticTokens` (each token an administrator in every tenant, as before)."""

    def __init__(self, app: ASGIApp, *, tokens: Mapping[str, str], open_paths: Iterable[str] = ()) -> None:
        warnings.warn(
            "tempo_agents.server.auth.BearerTokens is deprecated; use Authentication(app, "
            "authenticators=[StaticTokens(...)]) from tempo_agents.server.auth and tempo_agents.identity",
            DeprecationWarning,
            stacklevel=2,
        )
        if not tokens:
            raise ConfigurationError("BearerTokens needs at least one token")
        principals = {token: Principal.administrator(name) for token, name in tokens.items()}
        super().__init__(app, authenticators=[StaticTokens(principals)], open_paths=open_paths)


def authorization_dependency(authorize: Authorize) -> Callable[[Request], Awaitable[None]]:
    """A FastAPI dependency that runs ``authorize`` on each request. Deprecated: ``create_server(authorize=...)``
    runs it in its access guard (``server/access/``), with the roles and the policy; kept for code that built the
    dependency itself."""
    warnings.warn(
        "tempo_agents.server.auth.authorization_dependency is deprecated; create_server(authorize=...) runs the hook",
        DeprecationWarning,
        stacklevel=2,
    )

    async def check(request: Request) -> None:
        outcome = authorize(request)
        if inspect.isawaitable(outcome):
            await outcome

    return check
