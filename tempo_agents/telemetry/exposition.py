"""What a metrics endpoint serves: tempo-agents' metrics, the runs waiting for a person, the SDK's metrics."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from temporalio.client import Client

from tempo_agents.metrics import RUN_METRICS
from tempo_agents.store.outages import STORE_OUTAGES
from tempo_agents.telemetry.sdk_metrics import TemporalSdkMetrics
from tempo_agents.workflows.visibility_queries import runs_query, waiting_clauses

__all__ = ["CONTENT_TYPE", "MetricsExposition"]

CONTENT_TYPE = CONTENT_TYPE_LATEST
_COUNT_TIMEOUT_SECONDS = 5
_log = logging.getLogger(__name__)


class _Forwarded(Collector):
    def __init__(self, source: CollectorRegistry) -> None:
        self._source = source

    def collect(self) -> Iterable[Metric]:
        yield from self._source.collect()


class _StoreOutages(Collector):
    """How long this process's stores could not reach their databases (runs stood still meanwhile)."""

    def collect(self) -> Iterable[Metric]:
        outages, seconds = STORE_OUTAGES.read()
        yield CounterMetricFamily(
            "tempo_agents_store_unreachable_seconds",
            "Seconds this process's store could not reach its database (its operations waited meanwhile)",
            value=seconds,
        )
        yield CounterMetricFamily(
            "tempo_agents_store_outages", "Times this process's store found its database unreachable", value=outages
        )


class _WaitingRuns(Collector):
    """Runs of a task queue waiting for a person now, counted by Temporal's visibility store: the same number
    from every process of a deployment (aggregate with ``max``, not ``sum``)."""

    def __init__(self, client: Client, task_queue: str, loop: asyncio.AbstractEventLoop) -> None:
        self._client = client
        self._task_queue = task_queue
        self._loop = loop

    def collect(self) -> Iterable[Metric]:
        query = runs_query(self._task_queue, clauses=waiting_clauses())
        counting = asyncio.run_coroutine_threadsafe(self._client.count_workflows(query), self._loop)
        try:
            count = counting.result(timeout=_COUNT_TIMEOUT_SECONDS).count
        except Exception as error:  # the rest of the page is still worth serving
            counting.cancel()
            _log.warning("tempo_agents_runs_waiting left out: cannot count the runs on Temporal: %s", error)
            return
        gauge = GaugeMetricFamily(
            "tempo_agents_runs_waiting", "Runs waiting for a person (a suspended tool call)", labels=["task_queue"]
        )
        gauge.add_metric([self._task_queue], count)
        yield gauge


class MetricsExposition:
    """The metrics page of one process, in Prometheus' text format.

    ``client``/``task_queue``: count the runs waiting for a person through that client (on ``loop``, the
    client's event loop; :meth:`render` is called from another thread). ``sdk``: add the Temporal SDK's
    metrics.
    """

    def __init__(
        self,
        *,
        client: Client | None = None,
        task_queue: str | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        sdk: TemporalSdkMetrics | None = None,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Forwarded(RUN_METRICS))
        self.registry.register(_StoreOutages())
        if client is not None and task_queue is not None:
            self.registry.register(_WaitingRuns(client, task_queue, loop or asyncio.get_running_loop()))
        if sdk is not None:
            self.registry.register(sdk)

    def render(self) -> bytes:
        """The page (blocking: call it from a thread other than the client's event loop)."""
        return generate_latest(self.registry)
