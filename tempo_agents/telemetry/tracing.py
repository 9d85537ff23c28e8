"""OpenTelemetry tracing: Temporal's interceptor for workflow and activity spans, and where spans go.

The workflow-side spans come from ``temporalio.contrib.opentelemetry.TracingInterceptor``, which emits a
workflow span only when its workflow task is not replaying; tempo-agents' own spans (a model step, a
tool call) are made in activity code, which replay never runs again.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from opentelemetry import trace

from tempo_agents.errors import ConfigurationError

if TYPE_CHECKING:
    from temporalio.contrib.opentelemetry import TracingInterceptor

__all__ = ["OTLP_ENDPOINT_ENV", "TRACER_NAME", "otlp_tracer_provider", "tracing_interceptor"]

TRACER_NAME = "tempo_agents"
OTLP_ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
_OTLP_PROTOCOL_ENV = "OTEL_EXPORTER_OTLP_PROTOCOL"
_SERVICE_NAME_ENV = "OTEL_SERVICE_NAME"
TELEMETRY_EXTRA_NEEDED = "{what} needs the OpenTelemetry SDK: pip install 'tempo-agents[telemetry]'"


def tracing_interceptor(tracer_provider: trace.TracerProvider | None = None) -> TracingInterceptor:
    """Temporal's tracing interceptor (client and worker), on ``tracer_provider`` or the global one.

    Workflow spans are made even for runs started by a client without tracing (the HTTP API of another
    deployment, the ``temporal`` CLI).
    """
    try:  # Temporal's contrib module imports the OpenTelemetry SDK, which only the extra installs
        from temporalio.contrib.opentelemetry import TracingInterceptor
    except ImportError:
        raise ConfigurationError(TELEMETRY_EXTRA_NEEDED.format(what="tracing runs")) from None
    provider = tracer_provider or trace.get_tracer_provider()
    return TracingInterceptor(provider.get_tracer(TRACER_NAME), always_create_workflow_spans=True)


def otlp_tracer_provider(endpoint: str | None = None, *, service_name: str = "tempo-agents") -> trace.TracerProvider:
    """A tracer provider that batches spans to an OTLP collector at ``endpoint`` (default
    ``$OTEL_EXPORTER_OTLP_ENDPOINT``), over gRPC, or over HTTP when ``$OTEL_EXPORTER_OTLP_PROTOCOL`` is
    ``http/protobuf``; named ``$OTEL_SERVICE_NAME``, else ``service_name``. Needs the ``tempo-agents[telemetry]``
    extra."""
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
    except ImportError:
        raise ConfigurationError(TELEMETRY_EXTRA_NEEDED.format(what="exporting traces")) from None
    endpoint = endpoint or os.environ.get(OTLP_ENDPOINT_ENV)
    if not endpoint:
        raise ConfigurationError(f"no OTLP endpoint: pass one or set ${OTLP_ENDPOINT_ENV}")
    exporter: SpanExporter
    if os.environ.get(_OTLP_PROTOCOL_ENV, "grpc").startswith("http"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

        exporter = HttpExporter(endpoint=endpoint.rstrip("/") + "/v1/traces")
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        exporter = GrpcExporter(endpoint=endpoint)
    name = os.environ.get(_SERVICE_NAME_ENV) or service_name
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider
