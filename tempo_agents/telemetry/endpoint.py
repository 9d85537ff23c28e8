"""A worker's metrics endpoint: ``GET /metrics`` on a port of its own (``tempo-agents worker --metrics-port``)."""

from __future__ import annotations

import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import start_http_server

from tempo_agents.errors import ConfigurationError
from tempo_agents.telemetry.exposition import MetricsExposition

__all__ = ["MetricsEndpoint"]


class MetricsEndpoint:
    """Serves ``exposition`` on ``host:port`` from a thread (``port=0`` picks a free one) until :meth:`stop`."""

    def __init__(self, exposition: MetricsExposition, *, host: str = "0.0.0.0", port: int = 0) -> None:
        self._exposition = exposition
        self.host = host
        self.port = port
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        try:
            self._server, self._thread = start_http_server(self.port, self.host, registry=self._exposition.registry)
        except OSError as error:
            raise ConfigurationError(
                f"the metrics endpoint could not listen on {self.host}:{self.port}: {error.strerror or error}"
            ) from None
        self.port = int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}/metrics"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
