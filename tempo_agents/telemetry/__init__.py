"""Telemetry: OpenTelemetry spans, Prometheus metrics and JSON logs of agent runs."""

from tempo_agents.metrics import RunScope, current_scope
from tempo_agents.telemetry.endpoint import MetricsEndpoint
from tempo_agents.telemetry.exposition import MetricsExposition
from tempo_agents.telemetry.log_format import JsonLogFormatter, configure_logging
from tempo_agents.telemetry.plugin import TelemetryPlugin, instrument
from tempo_agents.telemetry.sdk_metrics import TemporalSdkMetrics
from tempo_agents.telemetry.tracing import otlp_tracer_provider, tracing_interceptor

__all__ = [
    "JsonLogFormatter",
    "MetricsEndpoint",
    "MetricsExposition",
    "RunScope",
    "TelemetryPlugin",
    "TemporalSdkMetrics",
    "configure_logging",
    "current_scope",
    "instrument",
    "otlp_tracer_provider",
    "tracing_interceptor",
]
