"""The HTTP API of an App: a FastAPI application (its OpenAPI document at ``/openapi.json``)."""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from tempo_agents.client.app import App
from tempo_agents.errors import StoreUnavailableError
from tempo_agents.identity import (
    Authenticator,
    JwtBearerTokens,
    OidcSettings,
    Principal,
    Role,
    StaticTokens,
    parse_role_mapping,
)
from tempo_agents.ingress import event_secrets_of
from tempo_agents.server.access import Policy, access_dependency
from tempo_agents.server.access.principals import RoleGrants, granted_principal
from tempo_agents.server.audit import AuditTrail, audit_router, record_intent
from tempo_agents.server.audit.door import STATE_NAME as DOOR_ROUTES
from tempo_agents.server.audit.door import door_routes
from tempo_agents.server.auth import Authentication, Authorize, add_groups, allow_all
from tempo_agents.server.codec_cors import CodecCors
from tempo_agents.server.dashboard.mounting import mount_dashboard
from tempo_agents.server.dashboard.routes import router as dashboard_router
from tempo_agents.server.errors import ERROR_RESPONSES, STORE_RETRY_AFTER_SECONDS, install_error_handlers
from tempo_agents.server.request_limits import MAX_BODY_BYTES, RequestLimits
from tempo_agents.server.routes import (
    agents,
    answer_links,
    codec,
    erasure,
    event_sources,
    events,
    identity,
    runs,
    schedules,
    slack_interactions,
    threads,
    tools,
)
from tempo_agents.server.routes.codec import CODEC_PREFIX
from tempo_agents.server.sign_in import SIGN_IN_PREFIX, ProviderClient, SessionCookies, sign_in_router
from tempo_agents.server.transport_send import ApiApp
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


@asynccontextmanager
async def _lifespan(api: FastAPI) -> AsyncIterator[None]:
    """On shutdown, the HTTP client the provider's keys are fetched with (``state.provider_keys``) is closed."""
    yield
    if api.state.provider_keys is not None:
        await api.state.provider_keys.close()


def _hooks(authorize: Authorize | Policy) -> tuple[Authorize | None, Policy | None]:
    """``authorize`` as a request hook (one parameter, today's form) or a policy (``principal, action, target``)."""
    if authorize is allow_all:
        return None, None
    if len(inspect.signature(authorize).parameters) >= _POLICY_PARAMETERS:
        return None, cast(Policy, authorize)
    return cast(Authorize, authorize), None


_POLICY_PARAMETERS = 3


def create_server(
    app: App,
    *,
    prefix: str = DEFAULT_PREFIX,
    authorize: Authorize | Policy = allow_all,
    tokens: Mapping[str, str | Principal] | None = None,
    oidc: OidcSettings | None = None,
    cors_origins: Sequence[str] = (),
    temporal_ui_url: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    groups: Mapping[str, Sequence[str]] | None = None,
    codec_cors_origins: Sequence[str] = (),
    roles: RoleGrants | None = None,
) -> FastAPI:
    """The HTTP API serving ``app`` (which must have a Temporal client) under ``prefix``.

    ``tokens`` (token → principal name, an admin in every tenant, or a :class:`Principal` with its roles) and
    ``oidc`` (an OpenID Connect provider whose JWTs are accepted; with its ``client_id``, the dashboard signs people
    in through it): every request but ``GET {prefix}/health`` needs ``Authorization: Bearer <token>`` (401
    otherwise), and the token's principal is recorded as ``answeredBy`` with each answer it sends.
    ``cors_origins``: browser origins allowed to call the API. Every route
    runs ``authorize`` first; the default allows everything. The operations dashboard is served at ``/``
    (linking runs to the Temporal UI at ``temporal_ui_url`` when given). A request body over
    ``max_body_bytes`` is refused (413) without being read, a JSON body nested too deeply or holding a lone
    surrogate is refused (400) before any route sees it (``request_limits.py``). ``groups`` (principal → group
    names, e.g. from the tokens file): the groups sent with each answer of a principal, for calls assigned to
    ``group:<name>``. One-click answer links (the App's ``answer_links``) are served under
    ``{prefix}/answer-links/`` without a token: the signed link is the credential. The codec server
    (``POST /codec/encode`` and ``/codec/decode``, for the Temporal UI and CLI) answers when the App has encryption
    keys, behind the same token check; ``codec_cors_origins`` are the Temporal UIs' origins allowed to call it
    (credentials allowed).

    ``roles`` (principal → tenant → role names): what each token's principal may do in which tenant (a tenant is a
    run's memory resource); without it every token holder is an admin everywhere. ``authorize`` is either a request
    hook (``authorize(request)``, raising ``ApiError`` to refuse) or a policy (``authorize(principal, action,
    target)`` returning allow, deny or a filter), run after the role check (``server/access/``).

    Every route that changes something is recorded in the store's audit trail (``server/audit/``), read at
    ``GET {prefix}/audit``.
    """
    api = ApiApp(
        title="tempo-agents",
        summary="Durable agents on Temporal: the reference's agent and tool routes, and run operations.",
        openapi_url="/openapi.json",
        lifespan=_lifespan,
    )
    bearer = JwtBearerTokens(oidc) if oidc is not None else None
    api.state.provider_keys = bearer.keys if bearer is not None else None
    api.state.tempo_app = app
    api.state.principal_groups = _principal_groups(tokens, groups)
    api.state.role_grants = (
        None if roles is None else {name: parse_role_mapping(held, name) for name, held in roles.items()}
    )
    base = prefix.rstrip("/")
    api.state.api_prefix = base
    api.include_router(_health_router(), prefix=base)
    # Every route that changes something records its intent first (after the guard: it names the principal).
    audited = [Depends(record_intent)]
    dependencies = [Depends(access_dependency(*_hooks(authorize))), *audited]
    routers = (agents.router, tools.router, runs.router, threads.router, schedules.router, erasure.router)
    for router in (*routers, identity.router, audit_router):
        api.include_router(router, prefix=base, dependencies=dependencies, responses=ERROR_RESPONSES)
    # A webhook's signature is its credential: no bearer token, no authorize (a sender is no principal).
    api.include_router(events.router, prefix=base, dependencies=audited, responses=ERROR_RESPONSES)
    api.include_router(event_sources.router, prefix=base, dependencies=audited, responses=ERROR_RESPONSES)
    # An answer link is its own credential too (signed, bound to one call, its principal named in it).
    api.include_router(answer_links.router, prefix=base, dependencies=audited)
    # Slack's request signature is its credential; its answers are audited like the others
    api.include_router(slack_interactions.router, prefix=base, dependencies=audited)
    changing = [*routers, events.router, event_sources.router, answer_links.router, slack_interactions.router]
    changing.append(dashboard_router)  # the dashboard's answers
    setattr(api.state, DOOR_ROUTES, door_routes(base, changing))  # for refusals before routing (audit)
    api.include_router(codec.router, dependencies=dependencies)  # at /codec, outside the API prefix
    api.include_router(metrics_router(), dependencies=dependencies)  # GET /metrics, outside the OpenAPI document
    open_paths = mount_dashboard(api, app, prefix=base, dependencies=dependencies, temporal_ui_url=temporal_ui_url)
    install_error_handlers(api)
    api.add_middleware(RequestLimits, max_body_bytes=max_body_bytes)  # inside the token check: 401 comes first
    authenticators = _authenticators(tokens, bearer, api.state.role_grants, groups)
    sessions = None
    if bearer is not None and bearer.settings.client_id:  # the dashboard signs people in through the provider
        sessions = SessionCookies(bearer.settings.session_secret)
        api.include_router(sign_in_router(ProviderClient(bearer), sessions))
        open_paths = [*open_paths, f"{SIGN_IN_PREFIX}/"]
    if authenticators:
        event_paths = [f"{base}/agents/{agent.id}/events" for agent in app.agents if event_secrets_of(app, agent.id)]
        event_paths += [f"{base}/events/{name}" for name in app.webhook_sources]
        api.add_middleware(
            Authentication,
            authenticators=authenticators,
            sessions=sessions,
            open_paths=[
                f"{base}/health",
                f"{base}/ready",
                f"{base}/answer-links/",
                f"{base}/slack/interactions",
                *event_paths,
                *open_paths,
            ],
            judges_any_token=oidc is not None,
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
    if codec_cors_origins:  # outermost of all: the UI's preflights carry no token
        api.add_middleware(CodecCors, origins=list(codec_cors_origins), prefix=CODEC_PREFIX)
    return api


def _principal_groups(
    tokens: Mapping[str, str | Principal] | None, groups: Mapping[str, Sequence[str]] | None
) -> dict[str, list[str]]:
    """Principal → groups: ``groups``, and those of the static tokens' principals (a tokens file's), which answer
    links, naming a principal but carrying no token, read."""
    merged = {name: list(names) for name, names in (groups or {}).items()}
    for value in (tokens or {}).values():
        if isinstance(value, Principal) and value.groups:
            add_groups(merged.setdefault(value.name, []), value.groups)
    return merged


def _authenticators(
    tokens: Mapping[str, str | Principal] | None,
    bearer: JwtBearerTokens | None,
    grants: Mapping[str, Mapping[str, frozenset[Role]]] | None = None,
    groups: Mapping[str, Sequence[str]] | None = None,
) -> list[Authenticator]:
    """Static tokens first (a dictionary look-up), then the provider's JWTs. A token given by name stands for that
    principal with its ``groups`` and ``grants`` (:func:`granted_principal`)."""
    authenticators: list[Authenticator] = []
    if tokens:
        named = groups or {}
        principals = {
            token: granted_principal(value, named.get(value, ()), grants) if isinstance(value, str) else value
            for token, value in tokens.items()
        }
        authenticators.append(StaticTokens(principals))
    if bearer is not None:
        authenticators.append(bearer)
    return authenticators
