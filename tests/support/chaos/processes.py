"""The processes the harness starts and kills: worker subprocesses (``python -m tests.support.chaos.worker``, the real
``tempo-agents worker`` CLI) in a pool of slots, and the API server in its own process. Each dies with the harness."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.chaos.app import EXEC_LOG_ENV, WORKER_ENV
from tests.support.chaos.progress import say
from tests.support.child_processes import dying_with_this_process

__all__ = [
    "API_READY_MARK",
    "REPO_ROOT",
    "WORKER_READY_TIMEOUT",
    "ApiProcess",
    "WorkerPool",
    "WorkerProcess",
]


REPO_ROOT = Path(__file__).resolve().parents[3]
WORKER_READY_TIMEOUT = 90.0
"""How long a worker subprocess may take to import and connect (generous: 2 shared cores)."""


@dataclass
class WorkerProcess:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    killed: bool = False
    _ready: bool = False

    @property
    def ready(self) -> bool:
        """Whether it polls its task queue (the CLI says so once the worker runs)."""
        if not self._ready and self.process.poll() is None:
            self._ready = "polling task queue" in self.log_path.read_text(errors="replace")
        return self._ready and self.process.poll() is None

    def output_tail(self, lines: int = 8) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])


class WorkerPool:
    """``size`` worker subprocesses (``python -m tests.support.chaos.worker``: the real ``tempo-agents worker`` CLI).

    Each start gets a new name (``w<slot>.<n>``), passed as ``$CHAOS_WORKER`` and written in every execution-log
    line, so a restarted worker is told apart from the one it replaces.
    """

    def __init__(
        self, *, address: str, store_url: str, task_queue: str, exec_log: Path, log_dir: Path, size: int = 2
    ) -> None:
        self.address = address
        self.store_url = store_url
        self.task_queue = task_queue
        self.exec_log = exec_log
        self.log_dir = log_dir
        self.slots: list[WorkerProcess | None] = [None] * size
        self._starts = 0
        self.exits: list[str] = []
        """Workers that exited without being killed, with the end of their output."""

    def _spawn(self, slot: int) -> WorkerProcess:
        name = f"w{slot}.{self._starts}"
        self._starts += 1
        log_path = self.log_dir / f"worker-{name}.log"
        env = {**os.environ, EXEC_LOG_ENV: str(self.exec_log), WORKER_ENV: name, "PYTHONUNBUFFERED": "1"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        command = [sys.executable, "-m", "tests.support.chaos.worker", "--address", self.address]
        command += ["--store", self.store_url, "--task-queue", self.task_queue]
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                dying_with_this_process(command),  # SIGKILLed with the harness, which spawns from one thread
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        worker = WorkerProcess(name, process, log_path)
        self.slots[slot] = worker
        return worker

    async def start(self) -> None:
        """Start every slot's worker and wait until each polls its task queue."""
        workers = [self._spawn(slot) for slot in range(len(self.slots))]
        await asyncio.gather(*(self.wait_ready(worker) for worker in workers))

    async def wait_ready(self, worker: WorkerProcess) -> None:
        deadline = time.monotonic() + WORKER_READY_TIMEOUT
        while not worker.ready:
            if worker.process.poll() is not None:
                raise RuntimeError(
                    f"worker {worker.name} exited with {worker.process.returncode}:\n{worker.output_tail()}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(f"worker {worker.name} was not ready in {WORKER_READY_TIMEOUT:.0f} s")
            await asyncio.sleep(0.1)

    def worker(self, slot: int) -> WorkerProcess:
        worker = self.slots[slot]
        assert worker is not None
        return worker

    def slot_of(self, name: str) -> int | None:
        return next((i for i, w in enumerate(self.slots) if w is not None and w.name == name), None)

    async def kill(self, slot: int) -> tuple[WorkerProcess, float]:
        """SIGKILL the slot's worker and wait until it is dead; returns it and when the signal was sent."""
        worker = self.worker(slot)
        worker.killed = True
        sent = time.time()
        with contextlib.suppress(ProcessLookupError):
            worker.process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(worker.process.wait)
        return worker, sent

    def restart(self, slot: int) -> WorkerProcess:
        return self._spawn(slot)

    def supervise(self) -> None:
        """Restart workers that exited on their own (noted in :attr:`exits`)."""
        for slot, worker in enumerate(self.slots):
            if worker is not None and not worker.killed and worker.process.poll() is not None:
                note = f"{worker.name} exited by itself with code {worker.process.returncode}: {worker.output_tail(3)}"
                say(note)
                self.exits.append(note)
                self._spawn(slot)

    async def stop(self) -> None:
        workers = [w for w in self.slots if w is not None and w.process.poll() is None]
        for worker in workers:
            with contextlib.suppress(ProcessLookupError):
                worker.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for worker in workers:
            while worker.process.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            if worker.process.poll() is None:
                worker.process.kill()
                await asyncio.to_thread(worker.process.wait)


API_READY_MARK = "HTTP API at "


class ApiProcess:
    """``tempo-agents serve`` for the chaos App in a subprocess (``python -m tests.support.chaos.serve``): another
    "host", which shares the store and the Temporal server with the workers, nothing else. Nothing kills it; readers
    attach to runs through it."""

    def __init__(self, *, address: str, store_url: str, task_queue: str, log_path: Path) -> None:
        self.log_path = log_path
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop(EXEC_LOG_ENV, None)  # the API server executes nothing
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        command = [sys.executable, "-m", "tests.support.chaos.serve", "--address", address]
        command += ["--store", store_url, "--task-queue", task_queue]
        command += ["--api-host", "127.0.0.1", "--api-port", "0"]
        with log_path.open("wb") as log:
            self.process = subprocess.Popen(
                dying_with_this_process(command),  # SIGKILLed with the harness
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.url = ""

    async def wait_ready(self) -> str:
        """Wait until it serves; returns its base URL (``http://127.0.0.1:PORT``)."""
        deadline = time.monotonic() + WORKER_READY_TIMEOUT
        while True:
            text = self.log_path.read_text(errors="replace")
            if API_READY_MARK in text:
                self.url = text.split(API_READY_MARK, 1)[1].split()[0].removesuffix("/api")
                return self.url
            if self.process.poll() is not None:
                raise RuntimeError(f"the API server exited with {self.process.returncode}:\n{text[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the API server was not ready in {WORKER_READY_TIMEOUT:.0f} s")
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.to_thread(self.process.wait), 15)
            except TimeoutError:
                self.process.kill()
                await asyncio.to_thread(self.process.wait)
