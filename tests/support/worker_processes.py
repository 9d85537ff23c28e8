"""An App written to a module file, served by real worker processes (`tempo-agents worker`) and used as a client here.

Tests that kill workers (SIGKILL) need the workers in processes of their own; the test process imports the same
module as the client, on the same store and task queue, so both sides run the same App.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from temporalio.testing import WorkflowEnvironment

from tempo_agents import App

WORKER_PROCESS = "TEMPO_AGENTS_TESTS_WORKER_PROCESS"
"""Set (to ``1``) in the environment of each worker process and nowhere else, so the module can tell the sides
apart (a fault a test injects belongs in the workers, never in the test process that imports the module too)."""


@dataclass
class WorkerProcesses:
    """The client side of an App whose workers run as processes; :meth:`start` starts one more."""

    app: App
    command: list[str]
    directory: Path

    def start(self) -> subprocess.Popen[bytes]:
        environment = {**os.environ, WORKER_PROCESS: "1"}
        return subprocess.Popen(self.command, cwd=self.directory, env=environment, stderr=subprocess.DEVNULL)


class MakeWorkerProcesses(Protocol):
    """The ``worker_processes`` fixture: :func:`app_in_worker_processes` in the test's directory, on the session's
    dev server; each App's store is closed after the test."""

    def __call__(self, source: str, module: str, store: str | None = None) -> WorkerProcesses: ...


def app_in_worker_processes(
    directory: Path, temporal_env: WorkflowEnvironment, source: str, module: str, store: str | None = None
) -> WorkerProcesses:
    """Write ``source`` (which defines ``app``) as ``<module>.py`` in ``directory`` and import it as the client, with
    a store file in ``directory`` (or the ``store`` URL given) and a task queue of its own."""
    (directory / f"{module}.py").write_text(textwrap.dedent(source))
    store = store or f"sqlite:///{directory / 'store.db'}"
    task_queue = f"tq-{uuid.uuid4()}"
    address = temporal_env.client.service_client.config.target_host
    command = [
        *(sys.executable, "-m", "tempo_agents.cli", "worker", "--app", f"{module}.py:app"),
        *("--address", address, "--store", store, "--task-queue", task_queue),
    ]
    sys.path.insert(0, str(directory))
    try:
        sys.modules.pop(module, None)
        app: App = importlib.import_module(module).app
    finally:
        sys.path.remove(str(directory))
    app.task_queue = task_queue
    app.registry.use_store(store)
    app.use_client(temporal_env.client)
    return WorkerProcesses(app=app, command=command, directory=directory)


async def replace_dead_workers(
    processes: WorkerProcesses, workers: list[subprocess.Popen[bytes]], until: asyncio.Future[Any]
) -> int:
    """Until ``until`` is done (or 150 s passed), start a new worker in place of each of ``workers`` that died (the
    list is updated in place); the number of deaths."""
    deaths = 0
    started = time.monotonic()
    while not until.done() and time.monotonic() - started < 150:
        for n, worker in enumerate(workers):
            if worker.poll() is not None:
                deaths += 1
                workers[n] = processes.start()
        await asyncio.sleep(0.1)
    return deaths
