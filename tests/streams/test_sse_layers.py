"""A run stream's body is written with the ``send`` the request came into the API app with, past the app's own
layers (``server/transport_send.py``): every one of those layers must hand a 2xx body on unchanged, and a layer
around the app (a user's, when the app is mounted in theirs) still sees every byte."""

from __future__ import annotations

from pathlib import Path

import httpx
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tempo_agents import App
from tempo_agents.server import create_server
from tests.conftest import AppFactory, running_worker
from tests.streams.test_many_readers import journal_wire, talker
from tests.support.http_api import served_asgi, sse_events

LONG = 120.0

BODY_UNCHANGED = {
    "starlette.middleware.errors.ServerErrorMiddleware": "looks at the start (a 500 only before it)",
    "fastapi.telemetry._asgi.ExceptionTelemetryMiddleware": "does not wrap send",
    "fastapi._body_limit.AppBodyLimitMiddleware": "limits the request's body, not the answer's",
    "tempo_agents.server.codec_cors.CodecCors": "adds headers to the codec routes' start",
    "starlette.middleware.cors.CORSMiddleware": "adds headers to the start",
    "tempo_agents.server.audit.completion.AuditTrail": "holds only an error's body (a status of 400 or more)",
    "tempo_agents.server.auth.Authentication": "answers or passes the request on, without wrapping send",
    "tempo_agents.server.request_limits.RequestLimits": "limits the request's body, not the answer's",
    "starlette.middleware.exceptions.ExceptionMiddleware": "looks at the start",
    "fastapi.middleware.asyncexitstack.AsyncExitStackMiddleware": "does not wrap send",
}
"""Each layer of the API app, reviewed: why a stream's body may go past it."""


def test_every_layer_of_the_api_app_hands_a_streams_body_on_unchanged(tmp_path: Path) -> None:
    app = App(store=f"sqlite:///{tmp_path}/runs.db")
    api = create_server(app, tokens={"token": "ops"}, cors_origins=["http://ui.test"], codec_cors_origins=["http://t"])
    layers = []
    layer: object = api.build_middleware_stack()
    while layer is not api.router:
        layers.append(f"{type(layer).__module__}.{type(layer).__qualname__}")
        layer = getattr(layer, "app")  # noqa: B009 - every middleware holds the next layer as .app
    unreviewed = [name for name in layers if name not in BODY_UNCHANGED]
    assert not unreviewed, (
        f"{unreviewed}: a run stream's body is written past the API app's layers (server/transport_send.py); a new "
        "layer must hand a 2xx response's body on unchanged, then join BODY_UNCHANGED with the reason"
    )
    assert len(layers) == len(BODY_UNCHANGED)


class BodyTap:
    """An ASGI layer around the API app that notes the body of every run stream it passes on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("/stream"):
            await self.app(scope, receive, send)
            return

        async def tapped(message: Message) -> None:
            if message["type"] == "http.response.body":
                self.bodies.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, tapped)


async def test_a_layer_around_the_api_app_sees_every_byte_of_a_live_stream(make_app: AppFactory) -> None:
    app = make_app([talker(40, "w", 0.02)])
    tap = BodyTap(create_server(app))
    async with served_asgi(tap) as port, running_worker(app):
        started = await app.stream("talker", "talk")
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=LONG) as http:
            answer = await http.get(f"/api/runs/{started.run_id}/stream")
        await started.aclose()
    assert answer.status_code == 200
    expected = await journal_wire(app, started.run_id)
    assert expected[-1][1]["type"] == "finish"
    assert sse_events(answer.content) == expected
    live = [body for body in tap.bodies if body.count(b"\nid: ") == 0 and body.startswith(b"id: ")]
    assert len(live) > 20, "the chunks were written as they were journaled, one write each"
    assert b"".join(tap.bodies) == answer.content
