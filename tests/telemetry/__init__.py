"""Tracing, metrics, logs and OTLP export."""
