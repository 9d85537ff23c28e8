"""The telemetry options of ``worker``, ``dev`` and ``serve``: JSON logs, OTLP traces, the metrics port."""

from __future__ import annotations

import argparse
import asyncio
import os

from opentelemetry import trace

from tempo_agents.cli._console import CliError, out
from tempo_agents.client.app import App
from tempo_agents.errors import ConfigurationError
from tempo_agents.telemetry.endpoint import MetricsEndpoint
from tempo_agents.telemetry.exposition import MetricsExposition
from tempo_agents.telemetry.log_format import LOG_FORMATS, configure_logging
from tempo_agents.telemetry.plugin import instrument
from tempo_agents.telemetry.sdk_metrics import TemporalSdkMetrics
from tempo_agents.telemetry.tracing import OTLP_ENDPOINT_ENV, otlp_tracer_provider

__all__ = ["DEFAULT_METRICS_HOST", "CommandTelemetry", "add_telemetry_options"]

DEFAULT_METRICS_HOST = "0.0.0.0"


def add_telemetry_options(command: argparse.ArgumentParser, *, metrics_port: bool) -> None:
    """``--log-format`` and ``--otlp-endpoint``; with ``metrics_port``, ``--metrics-port``/``--metrics-host``."""
    command.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        help="write log records to stderr as text or as JSON lines (with run_id and tool_call_id inside activities)",
    )
    command.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help=f"export OpenTelemetry traces to this OTLP collector (default ${OTLP_ENDPOINT_ENV}; "
        "needs tempo-agents[telemetry])",
    )
    if metrics_port:
        command.add_argument(
            "--metrics-port",
            type=int,
            metavar="PORT",
            help="serve Prometheus metrics (tempo-agents' and the Temporal SDK's) at http://HOST:PORT/metrics",
        )
        command.add_argument(
            "--metrics-host",
            default=DEFAULT_METRICS_HOST,
            help=f"address the metrics endpoint listens on (default {DEFAULT_METRICS_HOST})",
        )


class CommandTelemetry:
    """The telemetry of one command: set up around connecting, closed when the command ends.

    ``sdk_metrics``: collect the Temporal SDK's metrics (``serve`` always does, for ``/metrics``).
    """

    def __init__(self, args: argparse.Namespace, *, sdk_metrics: bool = False) -> None:
        self._args = args
        self._metrics_port: int | None = getattr(args, "metrics_port", None)
        self._otlp = args.otlp_endpoint or os.environ.get(OTLP_ENDPOINT_ENV) or None
        self._sdk = TemporalSdkMetrics() if sdk_metrics or self._metrics_port is not None else None
        self._provider: trace.TracerProvider | None = None
        self._endpoint: MetricsEndpoint | None = None

    def before_connect(self) -> None:
        """Logging, and the SDK's metrics (which clients must be connected with)."""
        if self._args.log_format is not None:
            configure_logging(self._args.log_format)
        if self._sdk is not None:
            self._sdk.install()

    async def after_connect(self, app: App) -> None:
        """Trace and count the App's runs when anything asks for it; start the metrics endpoint."""
        if self._otlp is not None:
            try:
                self._provider = otlp_tracer_provider(self._otlp)
            except ConfigurationError as error:
                raise CliError(error.message, exit_code=2) from None
        if self._provider is not None or self._metrics_port is not None or self._args.log_format == "json":
            instrument(app, tracer_provider=self._provider)
        if self._metrics_port is not None:
            exposition = MetricsExposition(
                client=app.client, task_queue=app.task_queue, loop=asyncio.get_running_loop(), sdk=self._sdk
            )
            self._endpoint = MetricsEndpoint(exposition, host=self._args.metrics_host, port=self._metrics_port)
            try:
                self._endpoint.start()
            except ConfigurationError as error:
                raise CliError(error.message) from None
            out(f"metrics at {self._endpoint.url}")
        if self._otlp is not None:
            out(f"exporting traces to {self._otlp}")

    def close(self) -> None:
        """Stop the metrics endpoint; send the spans not exported yet."""
        if self._endpoint is not None:
            self._endpoint.stop()
        shutdown = getattr(self._provider, "shutdown", None)
        if shutdown is not None:
            shutdown()
