"""The ``worker`` command (a worker for an App against any Temporal server) and ``dev`` (the embedded dev server)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Callable
from datetime import timedelta

from tempo_agents._ports import free_port
from tempo_agents.cli._collector import freeze_startup_objects
from tempo_agents.cli._console import CliError, one_line, out
from tempo_agents.cli._options import (
    add_api_options,
    add_app_options,
    add_encryption_options,
    add_server_options,
    connection_options,
)
from tempo_agents.cli._stop_signals import StopSignals
from tempo_agents.cli._telemetry import CommandTelemetry, add_telemetry_options
from tempo_agents.cli.app_loading import configure_app, connect, load_app, use_keys_file
from tempo_agents.cli.oidc_options import add_oidc_options
from tempo_agents.cli.serve import add_webhook_sources, api_access, print_api_urls, start_api
from tempo_agents.client.app import App
from tempo_agents.encryption import encryption_codec
from tempo_agents.errors import TempoAgentsError
from tempo_agents.worker.dev_server import DEFAULT_DB_FILENAME, DevServer

__all__ = ["add_commands", "cmd_dev", "cmd_worker"]


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``worker`` and ``dev``."""
    worker = commands.add_parser(
        "worker",
        help="run a worker for an App against a Temporal server",
        description="Run a worker for an App until SIGINT/SIGTERM, then shut down gracefully.",
    )
    add_server_options(worker)
    add_app_options(worker, required=True)
    worker.add_argument(
        "--graceful-timeout", type=float, default=10.0, metavar="SECONDS",
        help="on shutdown, how long running tool calls and model steps may finish (default 10)",
    )  # fmt: skip
    _add_prices_option(worker)
    add_telemetry_options(worker, metrics_port=True)
    worker.set_defaults(handler=cmd_worker)

    dev = commands.add_parser(
        "dev",
        help="start the embedded Temporal dev server and a worker",
        description=(
            "Start the embedded Temporal dev server (data in .tempo-agents/temporal.db, so runs survive "
            "restarts) and, with --app, a worker for that App, its HTTP API (on --api-port) and the "
            "operations dashboard at the API's address (/)."
        ),
    )
    add_app_options(dev, required=False)
    add_api_options(dev)
    add_oidc_options(dev)
    dev.add_argument("--port", type=int, default=7233, help="frontend port (default 7233; 0 picks a free one)")
    dev.add_argument(
        "--ui-port", type=int, default=8233, help="the Temporal UI's port (default 8233; 0 picks a free one)"
    )
    dev.add_argument("--headless", action="store_true", help="run the dev server without the Temporal UI")
    dev.add_argument(
        "--db-filename", default=DEFAULT_DB_FILENAME, help=f"server database (default {DEFAULT_DB_FILENAME})"
    )
    dev.add_argument("--graceful-timeout", type=float, default=10.0, metavar="SECONDS", help=argparse.SUPPRESS)
    _add_prices_option(dev)
    add_encryption_options(dev)
    add_telemetry_options(dev, metrics_port=True)
    dev.set_defaults(handler=cmd_dev)


def _add_prices_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--prices", metavar="FILE",
        help="a JSON price table (model id -> {input, output, cachedInput} US dollars per million tokens) over the "
        "published defaults; default $TEMPO_AGENTS_PRICES",
    )  # fmt: skip


async def cmd_worker(args: argparse.Namespace) -> int:
    """Serve ``--app`` on a Temporal server until SIGINT/SIGTERM."""
    app = configure_app(
        load_app(args.app),
        store=args.store,
        task_queue=args.task_queue,
        prices=args.prices,
        notifications=args.notifications,
    )
    telemetry = CommandTelemetry(args)
    telemetry.before_connect()
    await connect(app, args.address, args.namespace, **connection_options(args))
    signals = StopSignals()
    signals.install()

    def ready() -> None:
        out(
            f"worker for {args.app} polling task queue '{app.task_queue}' on {args.address} "
            f"(namespace {args.namespace}); Ctrl-C to stop"
        )

    try:
        await telemetry.after_connect(app)
        await _run_worker(app, signals, args.graceful_timeout, ready)
    finally:
        telemetry.close()
    out("worker stopped")
    return 0


async def cmd_dev(args: argparse.Namespace) -> int:
    """Start the embedded dev server and, with ``--app``, a worker and the HTTP API, until SIGINT/SIGTERM."""
    app = (
        configure_app(
            load_app(args.app),
            store=args.store,
            task_queue=args.task_queue,
            prices=args.prices,
            notifications=args.notifications,
        )
        if args.app
        else None
    )
    if app is not None:
        access = api_access(args)  # a refused --api-host fails before the dev server starts
        add_webhook_sources(app, args)
        use_keys_file(app, args.encryption_keys)
    signals = StopSignals()
    signals.install()
    server = DevServer(
        db_filename=args.db_filename,
        port=args.port,
        ui_port=None if args.headless else args.ui_port,
        extra_args=_ui_codec(app, args),
    )
    try:
        await server.start()
    except TempoAgentsError as error:
        hint = "; --port 0 picks a free port" if "already in use" in error.message else ""
        raise CliError(error.message + hint) from None
    signals.on_force.append(server.kill)
    try:
        out(f"Temporal dev server at {server.address} (namespace default, data {args.db_filename})")
        if server.ui_url is not None:
            out(f"Temporal UI at {server.ui_url}")
        if app is None:
            out(
                "no --app given, so no worker runs here; start one with: "
                f"tempo-agents worker --address {server.address} --app module:attr"
            )
            out("Ctrl-C to stop")
            await signals.stop.wait()
        else:
            telemetry = CommandTelemetry(args, sdk_metrics=True)
            telemetry.before_connect()
            await connect(app, server.address, "default")
            await telemetry.after_connect(app)
            api = await start_api(
                app, args, access=access, temporal_ui_url=server.ui_url, codec_cors_origins=_ui_origins(server)
            )
            try:

                def ready() -> None:
                    print_api_urls(api)
                    out(f"worker for {args.app} polling task queue '{app.task_queue}'; Ctrl-C to stop")

                await _run_worker(app, signals, args.graceful_timeout, ready)
            finally:
                await api.stop()
                telemetry.close()
    finally:
        await server.stop()
    out("stopped")
    return 0


def _ui_codec(app: App | None, args: argparse.Namespace) -> list[str]:
    """The dev server's arguments that point its UI at the API's codec routes, when the App encrypts (the API's port
    chosen now if it was to be any free one, so the UI knows it before the API listens)."""
    if app is None or args.headless or encryption_codec(app.data_converter) is None:
        return []
    if args.api_port == 0:
        args.api_port = free_port(args.api_host)
    host = f"[{args.api_host}]" if ":" in args.api_host else args.api_host
    return ["--ui-codec-endpoint", f"http://{host}:{args.api_port}/codec"]


def _ui_origins(server: DevServer) -> list[str]:
    """The dev UI's origins (as its address, and as ``localhost``), which may call the codec routes."""
    if server.ui_url is None:
        return []
    return [server.ui_url, server.ui_url.replace("://127.0.0.1:", "://localhost:")]


async def _until_stopped(signals: StopSignals, worker_task: asyncio.Task[None]) -> None:
    """Wait for a stop signal; fail if the worker stops on its own first."""
    stop_task = asyncio.create_task(signals.stop.wait())
    try:
        await asyncio.wait({stop_task, worker_task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop_task.cancel()
    if worker_task.done():
        error = worker_task.exception()
        raise CliError(f"the worker stopped: {one_line(error) if error else 'it exited'}")


async def _run_worker(app: App, signals: StopSignals, graceful_seconds: float, ready: Callable[[], None]) -> None:
    """Run the App's worker, calling ``ready`` once it polls, until a stop signal; then shut it down gracefully."""
    worker = app.worker(graceful_shutdown_timeout=timedelta(seconds=graceful_seconds))
    worker_task = asyncio.create_task(worker.run())
    await asyncio.sleep(0)
    freeze_startup_objects()
    ready()
    try:
        await _until_stopped(signals, worker_task)
    finally:
        if not worker_task.done():
            await worker.shutdown()
        with contextlib.suppress(BaseException):
            await worker_task
