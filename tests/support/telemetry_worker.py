"""The telemetry tests' App (``tests.support.telemetry_app``) run by ``tempo-agents worker`` in a process of its own,
its output read as it comes, and the same App in the test process to start and answer its runs."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

import tests.support.telemetry_app
from tempo_agents import App
from tests.support.cli_processes import CLI

ROOT = Path(__file__).resolve().parents[2]


class WorkerProcess:
    """``tempo-agents worker`` for tests.support.telemetry_app, its stdout and stderr read as they come."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        assert process.stdout is not None and process.stderr is not None
        self._readers = [
            asyncio.create_task(self._read(process.stdout, self.stdout)),
            asyncio.create_task(self._read(process.stderr, self.stderr)),
        ]

    @staticmethod
    async def _read(stream: asyncio.StreamReader, lines: list[str]) -> None:
        while line := await stream.readline():
            lines.append(line.decode())

    async def wait_for_output(self, needle: str, timeout: float = 120) -> None:
        """Wait for ``needle`` in the worker's output (a worker starts in seconds idle, in over 30 at a load of 20)."""
        deadline = time.monotonic() + timeout
        while not any(needle in line for line in self.stdout):
            assert self.process.returncode is None, f"the worker exited: {''.join(self.stderr)}"
            assert time.monotonic() < deadline, f"no {needle!r} in {self.stdout}; stderr: {''.join(self.stderr)}"
            await asyncio.sleep(0.05)

    async def stop(self) -> int:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(self.process.wait(), 30)
        await asyncio.gather(*self._readers)
        return code


@asynccontextmanager
async def worker_process(
    temporal_env: WorkflowEnvironment, store: str, task_queue: str, *options: str
) -> AsyncIterator[WorkerProcess]:
    address = temporal_env.client.service_client.config.target_host
    process = await asyncio.create_subprocess_exec(
        *CLI, "worker", "--address", address, "--app", "tests.support.telemetry_app:app", "--store", store,
        "--task-queue", task_queue, *options,
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    worker = WorkerProcess(process)
    try:
        await worker.wait_for_output("polling task queue")
        yield worker
    finally:
        await worker.stop()


def client_app(client: Client, store: str, task_queue: str) -> App:
    """The same App, in the test process: it starts and answers the runs the worker process runs."""
    return App(agents=tests.support.telemetry_app.agents(), store=store, task_queue=task_queue, client=client)
