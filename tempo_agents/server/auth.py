"""Access control: one dependency that every route runs before its handler.

Authentication is not part of this release: the default lets every request through. A server that
needs it passes ``create_server(app, authorize=...)`` a function that raises :class:`ApiError`
(401 ``Invalid or expired token``, 403 ``Access denied``) for requests it refuses.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from fastapi import Request

__all__ = ["Authorize", "allow_all", "authorization_dependency"]

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
