"""The ``serve`` command: the HTTP API of an App against a running Temporal server (workers run elsewhere)."""

from __future__ import annotations

import argparse

from tempo_agents.agent.app import App
from tempo_agents.cli._console import CliError, out
from tempo_agents.cli._options import add_api_options, add_app_options, add_server_options
from tempo_agents.cli._stop_signals import StopSignals
from tempo_agents.cli.app_loading import configure_app, connect, load_app
from tempo_agents.server.serving import ApiServer, ApiServerError


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
    serve.set_defaults(handler=cmd_serve)


async def start_api(app: App, host: str, port: int) -> ApiServer:
    """Start the HTTP API of ``app``; a port in use is a one-line CLI error."""
    server = ApiServer(app, host=host, port=port)
    try:
        await server.start()
    except ApiServerError as error:
        raise CliError(error.message + "; --api-port 0 picks a free port") from None
    return server


def print_api_urls(server: ApiServer) -> None:
    """Where the API and its OpenAPI document are."""
    out(f"HTTP API at {server.url}/api (OpenAPI document at {server.url}/openapi.json)")


async def cmd_serve(args: argparse.Namespace) -> int:
    """Serve ``--app``'s HTTP API until SIGINT/SIGTERM."""
    app = configure_app(load_app(args.app), store=args.store, task_queue=args.task_queue)
    await connect(app, args.address, args.namespace)
    signals = StopSignals()
    signals.install()
    server = await start_api(app, args.api_host, args.api_port)
    try:
        print_api_urls(server)
        out(f"serving {args.app} against Temporal at {args.address} (namespace {args.namespace}); Ctrl-C to stop")
        await signals.stop.wait()
    finally:
        await server.stop()
    out("stopped")
    return 0
