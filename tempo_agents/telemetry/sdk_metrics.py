"""The Temporal SDK's own metrics (poll and task latencies, slots, sticky cache, activity outcomes).

The SDK's core serves them in Prometheus' text format on a loopback port of its own; tempo-agents' metrics
endpoints read that page and serve it with their own metrics, so a process has one endpoint.
"""

from __future__ import annotations

import logging
import urllib.request
from collections.abc import Iterable

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from tempo_agents._ports import free_port

__all__ = ["TemporalSdkMetrics", "installed_sdk_metrics"]

_SCRAPE_TIMEOUT_SECONDS = 5
_installed: TemporalSdkMetrics | None = None
_log = logging.getLogger(__name__)


def installed_sdk_metrics() -> TemporalSdkMetrics | None:
    """The SDK metrics made the process's default by :meth:`TemporalSdkMetrics.install`, if any."""
    return _installed


class TemporalSdkMetrics(Collector):
    """A Temporal runtime whose metrics are collected with tempo-agents' own.

    Clients must be connected with :attr:`runtime` (``Client.connect(..., runtime=...)``, or
    :meth:`install` before connecting) for their workers' metrics to show.
    """

    def __init__(self) -> None:
        self._address = f"127.0.0.1:{free_port()}"
        self.runtime = Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(bind_address=self._address)))

    def install(self) -> None:
        """Make :attr:`runtime` the process's default: clients connected from now on use it, and every
        metrics page of the process shows its metrics."""
        global _installed
        Runtime.set_default(self.runtime, error_if_already_set=False)
        _installed = self

    def collect(self) -> Iterable[Metric]:
        try:
            with urllib.request.urlopen(f"http://{self._address}/metrics", timeout=_SCRAPE_TIMEOUT_SECONDS) as page:
                text = page.read().decode("utf-8")
        except OSError as error:  # the rest of the page is still worth serving
            _log.warning("the Temporal SDK's metrics left out: %s", error)
            return
        yield from text_string_to_metric_families(text)
