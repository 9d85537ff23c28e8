"""The Temporal side of an App: a client with the data converter its runs need, and a worker for its task queue
with the plugin that registers its workflows and activities."""

from __future__ import annotations

from typing import Any

from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.service import TLSConfig
from temporalio.worker import Worker

from tempo_agents.worker.plugin import TempoAgentsPlugin

__all__ = ["app_worker", "connect_runs_client", "runs_client"]


def runs_client(client: Client, data_converter: DataConverter) -> Client:
    """``client``, or a client of the same connection with the runs' data converter (pydantic's, encrypting when the
    App has keys: ``encryption.runs_data_converter``) when it has another."""
    if client.data_converter is data_converter:
        return client
    config = client.config()
    config["data_converter"] = data_converter
    return Client(**config)


async def connect_runs_client(
    address: str,
    *,
    namespace: str,
    tls: bool | TLSConfig | None,
    api_key: str | None,
    data_converter: DataConverter,
) -> Client:
    """A new connection to a Temporal server, with the runs' data converter."""
    return await Client.connect(address, namespace=namespace, tls=tls, api_key=api_key, data_converter=data_converter)


def app_worker(plugin: TempoAgentsPlugin, client: Client, task_queue: str, worker_options: dict[str, Any]) -> Worker:
    """A worker with ``plugin`` first among its plugins, on ``task_queue`` unless the options name another."""
    worker_options.setdefault("task_queue", task_queue)
    plugins = [plugin, *worker_options.pop("plugins", [])]
    return Worker(client, plugins=plugins, **worker_options)
