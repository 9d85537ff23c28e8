"""``http_api.py --auth``: what authenticating a request costs, static tokens next to the provider's JWTs.

One API server (no Temporal needed: ``GET /api/agents`` reads the App only) accepts both a static token and JWTs
from a local OpenID Connect provider (``oidc-provider-mock`` on 127.0.0.1, the test extra's, as the sign-in tests run
it: ``tests/support/oidc_provider.py``), and a second serves the same App with no token at all. Sequential requests,
one keep-alive connection per kind, taken in turn (no auth, a static token, a JWT, then again) so that a machine whose
load changes weighs on the three alike; then the verification alone (``JwtBearerTokens.authenticate``, keys cached),
in process.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import time

import httpx

from bench._common import median, out, quantile
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.identity import JwtBearerTokens, OidcSettings
from tempo_agents.server.serving import ApiServer
from tests.support.oidc_provider import running_provider

__all__ = ["auth_cost"]

_STATIC = "bench-static-token"
_CLIENT = "bench-client"


async def _timed_in_turn(kinds: dict[str, tuple[str, dict[str, str]]], count: int) -> dict[str, list[float]]:
    """Per kind (its server's URL and headers), ``count`` request times in microseconds, the kinds taken in turn."""
    clients = {
        name: httpx.AsyncClient(base_url=url, headers=headers, timeout=30) for name, (url, headers) in kinds.items()
    }
    times: dict[str, list[float]] = {name: [] for name in kinds}
    try:
        for _ in range(20):  # warm-up: the connections, the keys' first fetch
            for http in clients.values():
                assert (await http.get("/api/agents")).status_code == 200
        for _ in range(count):
            for name, http in clients.items():
                started = time.perf_counter()
                answer = await http.get("/api/agents")
                times[name].append((time.perf_counter() - started) * 1_000_000)
                assert answer.status_code == 200, answer.text
    finally:
        for http in clients.values():
            await http.aclose()
    return times


async def _verify_alone(settings: OidcSettings, token: str, count: int) -> list[float]:
    verifier = JwtBearerTokens(settings)
    await verifier.authenticate(token)  # the keys fetched once
    times: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        await verifier.authenticate(token)
        times.append((time.perf_counter() - started) * 1_000_000)
    await verifier.keys.close()
    return times


def _line(name: str, times: list[float]) -> str:
    return f"{name} p50 {median(times):.0f}us p95 {quantile(times, 0.95):.0f}us"


async def auth_cost(requests: int) -> int:
    """Print the per-request figures and the quotable last line."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with running_provider() as provider, tempfile.TemporaryDirectory() as scratch:
        await asyncio.to_thread(provider.set_user, "bench", {"roles": ["viewer"]})  # what GET /api/agents needs
        token = await asyncio.to_thread(provider.id_token, "bench", client_id=_CLIENT)
        settings = OidcSettings(issuer=provider.issuer, audience=_CLIENT)
        agent = Agent(id="quick", instructions="", model=ScriptedModel(lambda r: ScriptedResponse(text="ok")))
        app = App(agents=[agent], store=f"sqlite:///{scratch}/store.db")
        guarded = ApiServer(app, port=0, tokens={_STATIC: "bench"}, oidc=settings)
        open_server = ApiServer(app, port=0)
        await guarded.start()
        await open_server.start()
        try:
            kinds = {
                "none": (open_server.url, {}),
                "static": (guarded.url, {"Authorization": f"Bearer {_STATIC}"}),
                "jwt": (guarded.url, {"Authorization": f"Bearer {token}"}),
            }
            times = await _timed_in_turn(kinds, requests)
            none, static, jwt = times["none"], times["static"], times["jwt"]
        finally:
            await guarded.stop()
            await open_server.stop()
            await app.store.close()
        alone = await _verify_alone(settings, token, requests)
    out(f"load average {os.getloadavg()[0]:.2f}; GET /api/agents, {requests} sequential requests each: "
        f"{_line('no auth', none)}  {_line('static token', static)}  {_line('JWT (RS256)', jwt)}")  # fmt: skip
    out(f"JWT verification alone, in process (keys cached): {_line('verify', alone)}")
    out(
        f"http_api auth: per-request p50 no-auth={median(none):.0f}us static={median(static):.0f}us "
        f"jwt={median(jwt):.0f}us (jwt-static={median(jwt) - median(static):.0f}us) verify-alone={median(alone):.0f}us"
    )
    return 0
