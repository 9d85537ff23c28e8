"""The Temporal plugin that traces and counts an App's runs, and :func:`instrument`, which gives it to an App."""

from __future__ import annotations

from typing import TYPE_CHECKING

from opentelemetry import trace
from temporalio.client import Client, Interceptor
from temporalio.plugin import SimplePlugin
from temporalio.worker import Interceptor as WorkerInterceptor

from tempo_agents.telemetry.activity_interceptor import ActivityTelemetry
from tempo_agents.telemetry.tracing import TRACER_NAME, tracing_interceptor

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry
    from tempo_agents.client.app import App

__all__ = ["TelemetryPlugin", "instrument"]


class TelemetryPlugin(SimplePlugin):
    """Temporal's tracing interceptor (client: a span for each start, update and signal; worker: workflow and
    activity spans, never again on replay) and, with a ``registry``, tempo-agents' spans and metrics of model
    steps and tool calls.

    Spans go to ``tracer_provider`` (default: OpenTelemetry's global provider, a no-op until one is set).
    Put it on the client (:func:`instrument`) and every worker built from that client gets it too.
    """

    def __init__(self, registry: Registry | None = None, *, tracer_provider: trace.TracerProvider | None = None):
        provider = tracer_provider or trace.get_tracer_provider()
        interceptors: list[Interceptor | WorkerInterceptor] = [tracing_interceptor(provider)]
        if registry is not None:
            interceptors.append(ActivityTelemetry(registry, provider.get_tracer(TRACER_NAME)))
        super().__init__("tempo_agents.TelemetryPlugin", interceptors=interceptors)


def instrument(app: App, *, tracer_provider: trace.TracerProvider | None = None) -> None:
    """Trace and count ``app``'s runs: its client (connected already) gets a :class:`TelemetryPlugin`, and so
    does every worker :meth:`App.worker` builds from it."""
    config = app.client.config()
    # The client's own configuration (before plugins applied theirs): an earlier TelemetryPlugin is replaced.
    plugins = [p for p in config.get("plugins", ()) if not isinstance(p, TelemetryPlugin)]
    config["plugins"] = [*plugins, TelemetryPlugin(app.registry, tracer_provider=tracer_provider)]
    app.use_client(Client(**config))
