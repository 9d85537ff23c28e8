"""The HTTP API of an App: a FastAPI application (its OpenAPI document at ``/openapi.json``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from tempo_agents.client.app import App
from tempo_agents.errors import StoreUnavailableError
from tempo_agents.ingress import event_secrets_of
from tempo_agents.server.audit import AuditTrail, audit_router, record_intent
from tempo_agents.server.auth import Authorize, BearerTokens, allow_all, authorization_dependency
from tempo_agents.server.dashboard.mounting import mount_dashboard
from tempo_agents.server.errors import ERROR_RESPONSES, STORE_RETRY_AFTER_SECONDS, install_error_handlers
from tempo_agents.server.request_limits import MAX_BODY_BYTES, RequestLimits
from tempo_agents.server.routes import agents, answer_links, event_sources, events, runs, schedules, threads, tools
from tempo_agents.telemetry.api_route import metrics_router

__all__ = ["DEFAULT_PREFIX", "create_server"]

DEFAULT_PREFIX = "/api"

_log = logging.getLogger("tempo_agents.server")


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    status: str
    store: str


def _health_router() -> APIRouter:
    router = APIRouter(tags=["health"])

    @router.get("/health", summary="Whether the server answers (open to everyone, even with tokens)")
    async def health() -> Health:
        return Health(status="ok")

    @router.get(
        "/ready",
        summary="Whether the server can serve runs now: its store answers (open to everyone, even with tokens)",
        response_model=Readiness,
        responses={503: {"description": "The store cannot be reached; `Retry-After` says when to ask again"}},
    )
    async def ready(request: Request) -> Any:
        app: App = request.app.state.tempo_app
        try:
            await app.store.check()
        except StoreUnavailableError as error:
            _log.warning("not ready: %s", error.message)
            # Open to everyone: says that the store is down, not where it is (the log has the whole message).
            return JSONResponse(
                {"error": "the store cannot be reached", "code": error.code, "status": "unavailable"},
                status_code=503,
                headers={"retry-after": str(STORE_RETRY_AFTER_SECONDS)},
            )
        return Readiness(status="ready", store="ok")

    return router


def create_server(
    app: App,
    *,
    prefix: str = DEFAULT_PREFIX,
    authorize: Authorize = allow_all,
    tokens: Mapping[str, str] | None = None,
    cors_origins: Sequence[str] = (),
    temporal_ui_url: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    groups: Mapping[str, Sequence[str]] | None = None,
) -> FastAPI:
    """The HTTP API serving ``app`` (which must have a Temporal client) under ``prefix``.

    ``tokens`` (token → principal name): every request but ``GET {prefix}/health`` needs
    ``Authorization: Bearer <token>`` (401 otherwise), and the token's name is recorded as ``answeredBy``
    with each answer it sends. ``cors_origins``: browser origins allowed to call the API. Every route
    runs ``authorize`` first; the default allows everything. The operations dashboard is served at ``/``
    (linking runs to the Temporal UI at ``temporal_ui_url`` when given). A request body over
    ``max_body_bytes`` is refused (413) without being read, a JSON body nested too deeply or holding a lone
    surrogate is refused (400) before any route sees it (``request_limits.py``). ``groups`` (principal → group
    names, e.g. from the tokens file): the groups sent with each answer of a principal, for calls assigned to
    ``group:<name>``. One-click answer links (the App's ``answer_links``) are served under
    ``{prefix}/answer-links/`` without a token: the signed link is the credential. Every route that changes something
    is recorded in the store's audit trail (``server/audit/``), read at ``GET {prefix}/audit``.
    """
    api = FastAPI(
        title="tempo-agents",
        summary="Durable agents on Temporal: the reference's agent and tool routes, and run operations.",
        openapi_url="/openapi.json",
    )
    api.state.tempo_app = app
    api.state.principal_groups = {name: list(names) for name, names in (groups or {}).items()}
    base = prefix.rstrip("/")
    api.include_router(_health_router(), prefix=base)
    # Every route that changes something records its intent first (after authorize: it names the principal).
    audited = [Depends(record_intent)]
    dependencies = [Depends(authorization_dependency(authorize)), *audited]
    for router in (agents.router, tools.router, runs.router, threads.router, schedules.router, audit_router):
        api.include_router(router, prefix=base, dependencies=dependencies, responses=ERROR_RESPONSES)
    # A webhook's signature is its credential: no bearer token, no authorize (a sender is no principal).
    api.include_router(events.router, prefix=base, dependencies=audited, responses=ERROR_RESPONSES)
    api.include_router(event_sources.router, prefix=base, dependencies=audited, responses=ERROR_RESPONSES)
    # An answer link is its own credential too (signed, bound to one call, its principal named in it).
    api.include_router(answer_links.router, prefix=base, dependencies=audited)
    api.include_router(metrics_router(), dependencies=dependencies)  # GET /metrics, outside the OpenAPI document
    open_paths = mount_dashboard(api, app, prefix=base, dependencies=dependencies, temporal_ui_url=temporal_ui_url)
    install_error_handlers(api)
    api.add_middleware(RequestLimits, max_body_bytes=max_body_bytes)  # inside the token check: 401 comes first
    if tokens:
        event_paths = [f"{base}/agents/{agent.id}/events" for agent in app.agents if event_secrets_of(app, agent.id)]
        event_paths += [f"{base}/events/{name}" for name in app.webhook_sources]
        api.add_middleware(
            BearerTokens,
            tokens=dict(tokens),
            open_paths=[f"{base}/health", f"{base}/ready", f"{base}/answer-links/", *event_paths, *open_paths],
        )
    api.add_middleware(AuditTrail)  # outside the token check: it records refused sign-ins too
    if cors_origins:  # outermost, so preflights (which carry no token) are answered and 401s carry CORS headers
        api.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["*"],
        )
    return api
