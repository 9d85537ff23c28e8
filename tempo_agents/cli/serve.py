"""The ``serve`` command: the HTTP API of an App against a running Temporal server (workers run elsewhere)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import NamedTuple

from tempo_agents.cli._collector import freeze_startup_objects
from tempo_agents.cli._console import CliError, out
from tempo_agents.cli._options import (
    SINGLE_TOKEN_PRINCIPAL,
    TOKEN_ENV,
    add_api_options,
    add_app_options,
    add_server_options,
    connection_options,
)
from tempo_agents.cli._stop_signals import StopSignals
from tempo_agents.cli._telemetry import CommandTelemetry, add_telemetry_options
from tempo_agents.cli.app_loading import configure_app, connect, load_app
from tempo_agents.cli.oidc_options import add_oidc_options, oidc_settings
from tempo_agents.client.app import App
from tempo_agents.errors import ConfigurationError
from tempo_agents.identity import OidcSettings, Principal, RoleTable, load_roles, load_token_principals
from tempo_agents.ingress import load_webhook_sources
from tempo_agents.server.serving import ApiServer, ApiServerError, is_loopback

__all__ = [
    "ApiAccess",
    "add_command",
    "add_webhook_sources",
    "api_access",
    "api_roles",
    "api_tokens",
    "cmd_serve",
    "print_api_urls",
    "start_api",
]


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``serve``."""
    serve = commands.add_parser(
        "serve",
        help="serve the HTTP API of an App against a Temporal server",
        description=(
            "Serve the HTTP API (the reference's agent and tool routes, run streams and run operations, "
            "OpenAPI at /openapi.json) until SIGINT/SIGTERM. Runs are executed by workers started with "
            "tempo-agents worker."
        ),
    )
    add_server_options(serve)
    add_app_options(serve, required=True)
    add_api_options(serve)
    add_oidc_options(serve)
    add_telemetry_options(serve, metrics_port=False)
    serve.set_defaults(handler=cmd_serve)


class ApiAccess(NamedTuple):
    """Who may call the HTTP API: the static tokens (token → a name, an admin in every tenant, or a tokens file's
    principal with its roles) and the OpenID Connect provider whose tokens it accepts."""

    tokens: dict[str, str | Principal]
    oidc: OidcSettings | None
    roles: RoleTable | None = None
    """The roles of ``--roles``: those of the named tokens' principals whose entries give none."""


def api_roles(args: argparse.Namespace) -> RoleTable | None:
    """The roles of ``--roles`` (principal → tenant → roles), or ``None`` without it; a bad one is a one-line CLI
    error, before anything starts."""
    if not args.roles:
        return None
    try:
        return load_roles(args.roles)
    except ConfigurationError as error:
        raise CliError(error.message, exit_code=2) from None


def api_access(args: argparse.Namespace) -> ApiAccess:
    """The tokens of ``--tokens-file`` and ``--auth-token`` (or ``TEMPO_AGENTS_API_TOKEN``), the roles of
    ``--roles`` (:func:`api_roles`) and the provider of the ``--oidc-*`` options (:func:`oidc_settings`), read once
    for :func:`start_api`. A tokens file's principal holds its entry's roles, else those ``--roles`` gives it, else
    is an admin in every tenant.

    Without a token or an OpenID Connect provider the API may listen on the loopback interface only: a
    non-loopback ``--api-host`` is refused here, before anything starts.
    """
    oidc = oidc_settings(args)  # a bad --oidc-* option fails here, before anything starts
    roles = api_roles(args)  # and so does a bad --roles
    tokens: dict[str, str | Principal] = {}
    if args.tokens_file:
        try:
            tokens.update(load_token_principals(args.tokens_file, roles))
        except ConfigurationError as error:
            raise CliError(error.message, exit_code=2) from None
    single = args.auth_token or os.environ.get(TOKEN_ENV) or None
    if single:
        tokens[single] = SINGLE_TOKEN_PRINCIPAL
    if not tokens and oidc is None and not is_loopback(args.api_host):
        raise CliError(
            f"refusing to serve the HTTP API on {args.api_host} without a token: anyone who can reach it could "
            f"start and answer runs. Pass --auth-token TOKEN (or set {TOKEN_ENV}, or --tokens-file PATH), "
            "or listen on 127.0.0.1",
            exit_code=2,
        )
    return ApiAccess(tokens, oidc, roles)


def api_tokens(args: argparse.Namespace) -> dict[str, str | Principal]:
    """The static tokens of :func:`api_access` (token → a name, an admin in every tenant, or a tokens file's principal
    with its roles), checked as it checks them."""
    return api_access(args).tokens


def add_webhook_sources(app: App, args: argparse.Namespace) -> None:
    """Give ``app`` the sources of ``--webhook-sources`` (or ``TEMPO_AGENTS_WEBHOOK_SOURCES``), their secrets read
    from the environment; a bad file is a one-line CLI error, before anything connects."""
    if args.webhook_sources:
        try:
            app.add_webhook_sources(load_webhook_sources(args.webhook_sources))
        except ConfigurationError as error:
            raise CliError(error.message, exit_code=2) from None


async def start_api(
    app: App,
    args: argparse.Namespace,
    *,
    access: ApiAccess | None = None,
    temporal_ui_url: str | None = None,
    codec_cors_origins: Sequence[str] = (),
) -> ApiServer:
    """Start the HTTP API of ``app`` with the command's ``--api-*`` and CORS options, open to ``access`` (by
    default, :func:`api_access` of ``args``); ``codec_cors_origins``, origins allowed to call its codec routes beside
    ``--codec-cors-origin``'s.

    A port in use is a one-line CLI error.
    """
    if access is None:
        access = api_access(args)
    server = ApiServer(
        app,
        host=args.api_host,
        port=args.api_port,
        tokens=access.tokens,
        oidc=access.oidc,
        cors_origins=args.cors_origin,
        temporal_ui_url=temporal_ui_url or getattr(args, "temporal_ui_url", None),
        max_body_bytes=args.max_body_bytes,
        codec_cors_origins=[*args.codec_cors_origin, *codec_cors_origins],
        roles=None if access.roles is None else _role_names(access.roles),
    )
    try:
        await server.start()
    except ApiServerError as error:
        raise CliError(error.message + "; --api-port 0 picks a free port") from None
    return server


def _role_names(roles: RoleTable) -> dict[str, dict[str, list[str]]]:
    """The roles as ``create_server(roles=...)`` takes them: by name."""
    return {
        name: {tenant: sorted(role.value for role in held) for tenant, held in tenants.items()}
        for name, tenants in roles.items()
    }


def print_api_urls(server: ApiServer) -> None:
    """Where the API and its OpenAPI document are, and who may call it."""
    out(f"HTTP API at {server.url}/api (OpenAPI document at {server.url}/openapi.json)")
    out(f"Dashboard at {server.url}/")
    if server.token_count:
        out(
            f"  every request but GET /api/health needs 'Authorization: Bearer <token>' ({server.token_count} token(s))"
        )
    if server.oidc is not None:
        out(f"  bearer JWTs from {server.oidc.issuer} (audience {', '.join(server.oidc.audiences)}) accepted")
        if server.oidc.client_id:
            out(f"  the dashboard signs people in through {server.oidc.issuer}")
    if not server.token_count and server.oidc is None:
        out(f"  no token: listening on {server.host} only (loopback); pass --auth-token to require one")


async def cmd_serve(args: argparse.Namespace) -> int:
    """Serve ``--app``'s HTTP API until SIGINT/SIGTERM."""
    app = configure_app(
        load_app(args.app), store=args.store, task_queue=args.task_queue, notifications=args.notifications
    )
    access = api_access(args)  # a refused --api-host fails before anything connects
    add_webhook_sources(app, args)
    telemetry = CommandTelemetry(args, sdk_metrics=True)
    telemetry.before_connect()
    await connect(app, args.address, args.namespace, **connection_options(args))
    await telemetry.after_connect(app)
    signals = StopSignals()
    signals.install()
    server = await start_api(app, args, access=access)
    freeze_startup_objects()
    try:
        print_api_urls(server)
        out(f"serving {args.app} against Temporal at {args.address} (namespace {args.namespace}); Ctrl-C to stop")
        await signals.stop.wait()
    finally:
        await server.stop()
        telemetry.close()
    out("stopped")
    return 0
