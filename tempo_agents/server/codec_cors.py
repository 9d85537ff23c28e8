"""CORS for the codec routes alone: the Temporal UI calls them from its own origin, with credentials when it is
set to send them, while the rest of the API keeps its own CORS settings."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["CodecCors"]


class CodecCors:
    """ASGI middleware: requests under ``prefix`` go through CORS for ``origins`` (credentials allowed, the
    headers the UI sends: ``Authorization``, ``Content-Type``, ``X-Namespace``); any other passes untouched."""

    def __init__(self, app: ASGIApp, *, origins: Sequence[str], prefix: str) -> None:
        self.app = app
        self._prefix = prefix.rstrip("/") + "/"
        self._cors = CORSMiddleware(
            app,
            allow_origins=list(origins),
            allow_methods=["POST", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type", "X-Namespace"],
            allow_credentials=True,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path.startswith(self._prefix):
            await self._cors(scope, receive, send)
            return
        await self.app(scope, receive, send)
