"""Access control: bearer tokens that name principals, and a hook that runs before every route.

With tokens configured (``create_server(app, tokens={"secret": "alice"})``; on the command line
``--auth-token``, ``TEMPO_AGENTS_API_TOKEN`` or ``--tokens-file``) every request but ``GET /api/health``
(and CORS preflights) must carry ``Authorization: Bearer <token>``, or it is answered 401
``{"error": ...}`` before any route runs; ``/openapi.json`` and the docs are covered too. The token's
name is the request's *principal*: the one recorded as ``answeredBy`` with every resume, approval
and decline it sends.

``authorize=`` is a further hook (a function that raises :class:`ApiError`, 401 or 403, for requests it
refuses); it may set ``request.state.principal`` itself.
"""

from __future__ import annotations

import hmac
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path

from fastapi import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tempo_agents.errors import ConfigurationError

__all__ = [
    "Authorize",
    "BearerTokens",
    "allow_all",
    "authorization_dependency",
    "load_tokens_file",
    "principal",
]

Authorize = Callable[[Request], Awaitable[None] | None]
"""Decides whether a request may go on: returns to allow it, raises ``ApiError`` to refuse it."""


def allow_all(request: Request) -> None:
    """The default: every request is allowed."""


def authorization_dependency(authorize: Authorize) -> Callable[[Request], Awaitable[None]]:
    """A FastAPI dependency that runs ``authorize`` on each request."""

    async def check(request: Request) -> None:
        outcome = authorize(request)
        if inspect.isawaitable(outcome):
            await outcome

    return check


def principal(request: Request) -> str | None:
    """Who sent the request: the name of its bearer token (``None`` when the server has no tokens)."""
    name = getattr(request.state, "principal", None)
    return name if isinstance(name, str) else None


class BearerTokens:
    """ASGI middleware: every HTTP request but the open paths needs one of ``tokens`` (token → principal)."""

    def __init__(self, app: ASGIApp, *, tokens: Mapping[str, str], open_paths: Iterable[str] = ()) -> None:
        """``open_paths``: paths served without a token; one ending in ``/`` opens everything under it."""
        if not tokens:
            raise ConfigurationError("BearerTokens needs at least one token")
        self.app = app
        self._tokens = [(token.encode(), name) for token, name in tokens.items()]
        paths = list(open_paths)
        self._open = frozenset(path for path in paths if not path.endswith("/") or path == "/")
        self._open_prefixes = tuple(path for path in paths if path.endswith("/") and path != "/")

    def _principal(self, scope: Scope) -> str | None:
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                scheme, _, token = value.decode("latin-1").strip().partition(" ")
                if scheme.lower() != "bearer" or not token.strip():
                    return None
                offered = token.strip().encode("latin-1")
                found = None
                for known, name in self._tokens:  # compare with every token, in constant time
                    if hmac.compare_digest(offered, known):
                        found = name
                return found
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path in self._open or path.startswith(self._open_prefixes):
            await self.app(scope, receive, send)
            return
        name = self._principal(scope)
        if name is None:
            has_header = any(key == b"authorization" for key, _ in scope.get("headers", ()))
            message = "Invalid or expired token" if has_header else "Authentication required"
            response = JSONResponse({"error": message}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = name
        await self.app(scope, receive, send)


def load_tokens_file(path: str | Path) -> dict[str, str]:
    """Tokens and the principals they name, from a file: a JSON object ``{"token": "name"}``, or lines
    ``token name`` (blank lines and ``#`` comments skipped)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"cannot read the tokens file {file}: {error.strerror or error}") from None
    tokens: dict[str, str] = {}
    if text.lstrip().startswith("{"):
        try:
            loaded = json.loads(text)
        except ValueError as error:
            raise ConfigurationError(f"the tokens file {file} is not valid JSON: {error}") from None
        if not all(isinstance(k, str) and isinstance(v, str) and k and v for k, v in loaded.items()):
            raise ConfigurationError(f'the tokens file {file} must map tokens to names: {{"token": "name"}}')
        tokens.update(loaded)
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 2:
                raise ConfigurationError(f"{file}:{number}: expected 'token name'")
            tokens[parts[0]] = parts[1]
    if not tokens:
        raise ConfigurationError(f"the tokens file {file} holds no tokens")
    return tokens
