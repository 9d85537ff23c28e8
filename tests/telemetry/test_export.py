"""A worker process exports its spans over OTLP (HTTP) to a collector: a real HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import gzip
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tests.support.telemetry_worker import client_app, worker_process


class Collector:
    """Receives OTLP/HTTP trace exports and keeps every span (name and attributes)."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, dict[str, Any]]] = []
        self.paths: list[str] = []
        self.services: set[str] = set()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest.FromString(body)
                collector.paths.append(self.path)
                for resource in request.resource_spans:
                    service = [a for a in resource.resource.attributes if a.key == "service.name"]
                    collector.services.update(_value(a.value) for a in service)
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            attributes = {a.key: _value(a.value) for a in span.attributes}
                            collector.spans.append((span.name, attributes))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind is not None else None


@contextmanager
def collector() -> Iterator[Collector]:
    receiver = Collector()
    thread = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()


async def test_worker_exports_run_spans_over_otlp(
    temporal_env: WorkflowEnvironment, client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    task_queue = f"tq-{uuid.uuid4()}"
    app = client_app(client, store, task_queue)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")  # inherited by the worker process
    monkeypatch.setenv("OTEL_SERVICE_NAME", "billing-workers")
    with collector() as receiver:
        async with worker_process(temporal_env, store, task_queue, "--otlp-endpoint", receiver.url) as worker:
            assert f"exporting traces to {receiver.url}" in "".join(worker.stdout)
            run = await app.generate("shop", "what is my balance?")
        # the worker exports what it has not sent yet when it stops
    assert set(receiver.paths) == {"/v1/traces"}
    assert receiver.services == {"billing-workers"}
    steps = sorted(a["tempo_agents.step"] for name, a in receiver.spans if name == "tempo_agents.model_step")
    assert steps == [0, 1]
    (call,) = [a for name, a in receiver.spans if name == "tempo_agents.tool_call"]
    assert (call["gen_ai.tool.name"], call["tempo_agents.outcome"], call["tempo_agents.run_id"]) == (
        "lookup",
        "result",
        run.run_id,
    )
    names = [name for name, _ in receiver.spans]
    assert names.count("RunWorkflow:AgentRunWorkflow") == 1
