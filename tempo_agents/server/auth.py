"""Access control: bearer tokens that name principals, and a hook that runs before every route.

With tokens configured (``create_server(app, tokens={"secret": "alice"})``; on the command line
``--auth-token``, ``TEMPO_AGENTS_API_TOKEN`` or ``--tokens-file``) every request but ``GET /api/health``
(and CORS preflights) must carry ``Authorization: Bearer <token>``, or it is answered 401
``{"error": ...}`` before any route runs; ``/openapi.json`` and the docs are covered too. The token's
name is the request's *principal*: the one recorded as ``answeredBy`` with every resume, approval
and decline it sends.

A principal may belong to groups (``create_server(groups={"alice": ["finance"]})``, or a tokens file's groups):
its answers carry them, and a call assigned to ``group:finance`` accepts them.

``authorize=`` is a further hook (a function that raises :class:`ApiError`, 401 or 403, for requests it
refuses); it may set ``request.state.principal`` itself. The roles a principal holds in each tenant, and the guard
every route passes through, are ``server/access/``'s.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path

from fastapi import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tempo_agents.errors import ConfigurationError

__all__ = [
    "Authorize",
    "BearerTokens",
    "allow_all",
    "load_token_groups",
    "load_tokens_file",
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


def principal_groups(request: Request) -> list[str]:
    """The groups the request's principal belongs to (the server's ``groups``, e.g. from its tokens file)."""
    name = principal(request)
    groups: Mapping[str, Sequence[str]] = getattr(request.app.state, "principal_groups", {})
    return list(groups.get(name, [])) if name is not None else []


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
    """Tokens and the principals they name, from a file: a JSON object ``{"token": "name"}`` (or
    ``{"token": {"name": "alice", "groups": ["finance"]}}``), or lines ``token name`` or ``token name group,group``
    (blank lines and ``#`` comments skipped). The groups are read by :func:`load_token_groups`."""
    return {token: name for token, (name, _) in _read_tokens_file(path).items()}


def load_token_groups(path: str | Path) -> dict[str, list[str]]:
    """The groups of each principal a tokens file names (principal → group names; only those with groups)."""
    groups: dict[str, list[str]] = {}
    for name, names in _read_tokens_file(path).values():
        if names:
            kept = groups.setdefault(name, [])
            kept.extend(group for group in names if group not in kept)
    return groups


def _read_tokens_file(path: str | Path) -> dict[str, tuple[str, list[str]]]:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"cannot read the tokens file {file}: {error.strerror or error}") from None
    tokens: dict[str, tuple[str, list[str]]] = {}
    if text.lstrip().startswith("{"):
        try:
            loaded = json.loads(text)
        except ValueError as error:
            raise ConfigurationError(f"the tokens file {file} is not valid JSON: {error}") from None
        for token, value in loaded.items():
            entry = _json_entry(value)
            if not token or entry is None:
                raise ConfigurationError(
                    f'the tokens file {file} must map tokens to names: {{"token": "name"}} or '
                    '{"token": {"name": "name", "groups": ["group"]}}'
                )
            tokens[token] = entry
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) not in (2, 3):
                raise ConfigurationError(f"{file}:{number}: expected 'token name' or 'token name group,group'")
            names = [group for group in parts[2].split(",") if group] if len(parts) == 3 else []
            tokens[parts[0]] = (parts[1], names)
    if not tokens:
        raise ConfigurationError(f"the tokens file {file} holds no tokens")
    return tokens


def _json_entry(value: object) -> tuple[str, list[str]] | None:
    """A JSON tokens file's value: a name, or ``{"name": ..., "groups": [...]}``; ``None`` when malformed."""
    if isinstance(value, str) and value:
        return value, []
    if not isinstance(value, dict) or set(value) - {"name", "groups"}:
        return None
    name, groups = value.get("name"), value.get("groups", [])
    if not isinstance(name, str) or not name or not isinstance(groups, list):
        return None
    if not all(isinstance(group, str) and group for group in groups):
        return None
    return name, list(groups)
