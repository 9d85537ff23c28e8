"""The HTTP API of an App: a FastAPI application (its OpenAPI document at ``/openapi.json``)."""

from __future__ import annotations

from fastapi import Depends, FastAPI

from tempo_agents.agent.app import App
from tempo_agents.server.auth import Authorize, allow_all, authorization_dependency
from tempo_agents.server.errors import install_error_handlers
from tempo_agents.server.routes import agents, runs, tools

__all__ = ["DEFAULT_PREFIX", "create_server"]

DEFAULT_PREFIX = "/api"


def create_server(app: App, *, prefix: str = DEFAULT_PREFIX, authorize: Authorize = allow_all) -> FastAPI:
    """The HTTP API serving ``app`` (which must have a Temporal client) under ``prefix``.

    Every route runs ``authorize`` first; the default allows everything.
    """
    api = FastAPI(
        title="tempo-agents",
        summary="Durable agents on Temporal: the reference's agent and tool routes, and run operations.",
        openapi_url="/openapi.json",
    )
    api.state.tempo_app = app
    dependencies = [Depends(authorization_dependency(authorize))]
    for router in (agents.router, tools.router, runs.router):
        api.include_router(router, prefix=prefix.rstrip("/"), dependencies=dependencies)
    install_error_handlers(api)
    return api
