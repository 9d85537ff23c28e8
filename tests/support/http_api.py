"""Helpers of the HTTP API tests: a real uvicorn on a free loopback port, SSE parsing, the parity App."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any, Literal

import httpx
import uvicorn
from starlette.types import ASGIApp

from tempo_agents import Agent, App
from tempo_agents.identity import OidcSettings, Principal
from tempo_agents.server.access import Policy
from tempo_agents.server.access.principals import RoleGrants
from tempo_agents.server.auth import Authorize, allow_all
from tempo_agents.server.request_limits import MAX_BODY_BYTES
from tempo_agents.server.serving import ApiServer
from tests.support.examples import EXAMPLES, example_module

__all__ = [
    "EXAMPLE",
    "ServedResponse",
    "id_events",
    "parity_agent",
    "parity_module",
    "served",
    "served_asgi",
    "sse_blocks",
    "sse_chunks",
    "sse_events",
    "types",
]

EXAMPLE = EXAMPLES / "reference_parity.py"
SERVER_STOP_SECONDS = 120.0


def parity_module() -> ModuleType:
    """``examples/reference_parity.py``, imported once."""
    return example_module("reference_parity.py")


def parity_agent(**overrides: Any) -> Agent:
    build: Callable[..., Agent] = parity_module().build_assistant
    return build(**overrides)


@asynccontextmanager
async def served(
    app: App,
    authorize: Authorize | Policy = allow_all,
    tokens: Mapping[str, str | Principal] | None = None,
    groups: dict[str, list[str]] | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    oidc: OidcSettings | None = None,
    roles: RoleGrants | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """The App's HTTP API on 127.0.0.1 (a free port) and an httpx client for its ``/api`` (``groups``: principal →
    group names, as a tokens file gives them)."""
    server = ApiServer(
        app,
        port=0,
        authorize=authorize,
        tokens=tokens,
        oidc=oidc,
        groups=groups,
        max_body_bytes=max_body_bytes,
        roles=roles,
    )
    await server.start()
    try:
        # The client lets an idle connection go before the server's 5 s keep-alive does (httpx keeps it 5 s too, so a
        # request after a pause of exactly that could go out on a connection the server was closing: a ReadError).
        limits = httpx.Limits(keepalive_expiry=2)
        async with httpx.AsyncClient(base_url=server.url + "/api", timeout=60, limits=limits) as http:
            yield http
    finally:
        await server.stop()


def sse_blocks(body: bytes) -> list[str]:
    """The blocks of an SSE body, checked for the framing the official client needs."""
    text = body.decode()
    assert "\r" not in text
    assert text.endswith("\n\n")
    return [block for block in text.split("\n\n") if block]


def sse_chunks(body: bytes) -> list[dict[str, Any]]:
    """The chunks of a reference-route SSE body: only ``data:`` lines, one per block, ``[DONE]`` last."""
    blocks = [block for block in sse_blocks(body) if not block.startswith(":")]
    assert blocks[-1] == "data: [DONE]"
    chunks = []
    for block in blocks[:-1]:
        assert block.startswith("data: ") and "\n" not in block, block
        chunks.append(json.loads(block[len("data: ") :]))
    return chunks


@asynccontextmanager
async def served_asgi(
    asgi: ASGIApp, *, lifespan: Literal["on", "off"] = "on", log_level: str = "warning"
) -> AsyncIterator[int]:
    """Any ASGI app (the API app with a route or a layer of a test's own) served by uvicorn on 127.0.0.1, a free
    port; yields the port."""
    server = uvicorn.Server(uvicorn.Config(asgi, host="127.0.0.1", port=0, log_level=log_level, lifespan=lifespan))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not task.done(), "the server did not start"
            await asyncio.sleep(0.01)
        yield int(server.servers[0].sockets[0].getsockname()[1])
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, SERVER_STOP_SECONDS)


class ServedResponse:
    """An ASGI response served in this process as a server serves it to a client that reads everything and stays:
    each non-empty body message, one write to the client's socket, lands in ``bodies``; ``task`` ends with the
    response."""

    def __init__(self, response: ASGIApp) -> None:
        self.bodies: list[bytes] = []
        self._closed = asyncio.Event()
        self.task = asyncio.create_task(self._serve(response))

    async def _serve(self, response: ASGIApp) -> None:
        async def receive() -> dict[str, Any]:
            await self._closed.wait()  # the client never goes away
            return {"type": "http.disconnect"}

        async def send(message: Mapping[str, Any]) -> None:
            if message["type"] == "http.response.body" and message.get("body"):
                self.bodies.append(message["body"])

        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "method": "GET"}
        await response(scope, receive, send)
        self._closed.set()


def sse_events(body: bytes) -> list[tuple[int | None, dict[str, Any]]]:
    """``(id, data)`` of each event of a run-stream body, up to ``[DONE]`` (which must end it): every block is an
    ``id:`` line and a ``data:`` line, or a ``data:`` line alone (id ``None``: the error that cuts a stream off)."""
    blocks = [block for block in sse_blocks(body) if not block.startswith(":")]
    assert blocks[-1] == "data: [DONE]"
    events: list[tuple[int | None, dict[str, Any]]] = []
    for block in blocks[:-1]:
        *id_line, data_line = block.split("\n")
        assert [line[:4] for line in id_line] in ([], ["id: "]) and data_line.startswith("data: "), block
        events.append((int(id_line[0][4:]) if id_line else None, json.loads(data_line[6:])))
    return events


def id_events(body: bytes) -> list[tuple[int, dict[str, Any]]]:
    """``sse_events`` of a run-stream body whose every block is an ``id:`` line and a ``data:`` line."""
    events = sse_events(body)
    assert all(offset is not None for offset, _ in events), events
    return [(offset, data) for offset, data in events if offset is not None]


def types(chunks: list[dict[str, Any]]) -> list[str]:
    return [chunk["type"] for chunk in chunks]
