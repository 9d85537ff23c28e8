"""The ``send`` the ASGI server handed the API app, kept in the request's scope for the SSE relay's body writes.

A streamed chunk is written to each of its run's streams as it is journaled (``sse.py``): a thousand streams are a
thousand ``send`` calls a chunk. Through the app, each call passes the ``send`` wrapper of every layer between the
route and the server (Starlette's error and exception middlewares, the route's exception handling, the audit trail),
each a coroutine that looks only at the response's start and hands a body on unchanged. :class:`ApiApp` keeps the
``send`` it was called with in the scope, and the relay writes a stream's body with it once the stream's head has
gone through every layer: about a fifth of a delivery's cost in the API process (bench/README.md,
``many_watchers.py``).

So every layer of ``create_server``'s app must hand a 2xx response's body on unchanged; a test walks the app's
layers and holds each to that. Mounted in another ASGI app, only this app's own layers are skipped: the ``send`` kept
is the one the outer app passed in.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

__all__ = ["SCOPE_KEY", "ApiApp", "transport_send"]

SCOPE_KEY = "tempo_agents.transport_send"


class ApiApp(FastAPI):
    """The HTTP API's FastAPI app: keeps the ``send`` each HTTP request came in with (:func:`transport_send`)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[SCOPE_KEY] = send
        await super().__call__(scope, receive, send)


def transport_send(scope: Scope) -> Send | None:
    """The ``send`` the request came into the API app with (``None`` outside an :class:`ApiApp`)."""
    kept: Send | None = scope.get(SCOPE_KEY)
    return kept
