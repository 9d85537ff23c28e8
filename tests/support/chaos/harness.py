"""The chaos harness: worker subprocesses it SIGKILLs and restarts, the runs it starts and follows, the Temporal
dev server it SIGKILLs and restarts. ``tests/durability/test_chaos.py`` and ``bench/chaos.py`` drive it; the verdict is
``tests/support/chaos/check.py``'s.

Nothing here configures the runtime (heartbeat timeouts, retry policies): the runs use the defaults, which
are what the guarantees are about.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from temporalio.client import Client, WorkflowFailureError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError

from tempo_agents import App
from tempo_agents.errors import ResumeError
from tempo_agents.worker.dev_server import DevServer
from tempo_agents.workflows.payloads import RunResult
from tests.support.chaos.app import EXEC_LOG_ENV, WORKER_ENV, build_app
from tests.support.chaos.check import Key, Kill, Report, RunOutcome, check, check_stream, saved_outcomes

REPO_ROOT = Path(__file__).resolve().parents[3]
WORKER_READY_TIMEOUT = 90.0
"""How long a worker subprocess may take to import and connect (generous: 2 shared cores)."""


def _say(line: str) -> None:
    print(f"[chaos {time.strftime('%H:%M:%S')}] {line}", flush=True)


# The execution log, as it grows ------------------------------------------------------------------


class ExecLogTail:
    """Follows the execution log: which executions are open, on which worker."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._position = 0
        self._partial = b""
        self.open: dict[str, set[Key]] = {}
        self.started: list[tuple[str, Key, float]] = []
        """Every start line so far: (worker, key, time)."""
        self.ended: list[tuple[str, Key, float]] = []
        """Every end line so far: (worker, key, time)."""

    def poll(self) -> None:
        if not self.path.exists():
            return
        with self.path.open("rb") as log:
            log.seek(self._position)
            data = log.read()
        self._position += len(data)
        data = self._partial + data
        *complete, self._partial = data.split(b"\n")
        for raw in complete:
            record = json.loads(raw)
            key: Key = (record["run"], record["kind"], record["call"], record["phase"])
            worker = record["worker"]
            if record["ev"] == "start":
                self.open.setdefault(worker, set()).add(key)
                self.started.append((worker, key, record["t"]))
            else:
                self.open.get(worker, set()).discard(key)
                self.ended.append((worker, key, record["t"]))

    def busy(self, worker: str) -> bool:
        return bool(self.open.get(worker))

    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0


# Worker subprocesses ----------------------------------------------------------------------------


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the harness dies, so no worker outlives a killed test."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_PR_SET_PDEATHSIG = 1


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
                command,
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,  # the harness spawns from its one event-loop thread
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
                _say(note)
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


# The API server, in its own process --------------------------------------------------------------


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
                command,
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
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


async def read_run_stream(base_url: str, run_id: str) -> list[tuple[int, str]]:
    """Follow ``GET /api/runs/{run_id}/stream`` from offset 0 on one connection until ``[DONE]``; returns the
    ``(id, chunk type)`` of every event, in order."""
    events: list[tuple[int, str]] = []
    timeout = httpx.Timeout(10.0, read=120.0)  # the server pings every 15 s while a run is idle
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=timeout) as http,
        http.stream("GET", f"/api/runs/{run_id}/stream", params={"offset": 0}) as response,
    ):
        response.raise_for_status()
        buffer = ""
        async for text in response.aiter_text():
            buffer += text
            *blocks, buffer = buffer.split("\n\n")
            for block in blocks:
                event_id: int | None = None
                data = ""
                for line in block.split("\n"):
                    if line.startswith("id: "):
                        event_id = int(line[4:])
                    elif line.startswith("data: "):
                        data = line[6:]
                if data == "[DONE]":
                    return events
                if event_id is not None and data:
                    events.append((event_id, json.loads(data)["type"]))
    raise RuntimeError(f"the stream of {run_id[:8]} ended without [DONE] after {len(events)} events")


# Runs ---------------------------------------------------------------------------------------------


RESUME_DATA = {"ok": True}


@dataclass
class RunFollower:
    """Starts one run and follows it to its end: resumes it once it is suspended (when allowed), and reports
    how its workflow ended. Survives the Temporal server going away (RPC errors are retried)."""

    app: App
    agent_id: str
    may_resume: asyncio.Event
    run_id: str = ""
    suspended: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: RunOutcome | None = None

    async def start(self, prompt: str) -> None:
        stream = await self.app.agent(self.agent_id).stream(prompt)
        self.run_id = stream.run_id

    async def follow(self) -> RunOutcome:
        if self.agent_id == "chaos-suspend":
            await self._until_suspended()
            if not self.suspended.is_set():
                return await self._result()
            await self.may_resume.wait()
            await self._resume()
        self.outcome = await self._result()
        return self.outcome

    async def _until_suspended(self) -> None:
        store = self.app.store
        offset = 0
        while True:
            for entry in await store.read_chunks(self.run_id, offset, 10_000):
                offset = entry.offset + 1
                chunk = entry.chunk
                if chunk["type"] == "finish":
                    if chunk["payload"]["stepResult"]["reason"] == "suspended":
                        self.suspended.set()
                    return
            await asyncio.sleep(0.2)

    async def _resume(self) -> None:
        while True:
            try:
                await self.app.agent(self.agent_id).resume_stream(RESUME_DATA, run_id=self.run_id)
                return
            except ResumeError as error:
                # An earlier attempt may have been applied although its answer was lost with the server.
                _say(f"resume of {self.run_id[:8]} refused: {error}; not retried")
                return
            except (RPCError, RuntimeError) as error:
                _say(f"resume of {self.run_id[:8]} failed ({type(error).__name__}: {error}); retrying")
                await asyncio.sleep(0.5)

    async def _result(self) -> RunOutcome:
        handle = self.app.client.get_workflow_handle(self.run_id, result_type=RunResult)
        while True:
            try:
                result = await asyncio.wait_for(handle.result(), 30)
            except TimeoutError:
                continue
            except WorkflowFailureError as error:
                cause = error.cause
                return RunOutcome(self.agent_id, "failed", f"{cause}" if cause is not None else str(error))
            except RPCError:
                await asyncio.sleep(0.5)
                continue
            return RunOutcome(self.agent_id, "completed", result.finish_reason)


@dataclass
class ChaosWorld:
    """Everything one chaos scenario runs on: a store, an execution log, a worker pool, the client's App."""

    work_dir: Path
    client: Client
    address: str
    workers: int = 2
    store_url: str = ""
    """The store every process shares (default: a SQLite file in ``work_dir``); a PostgreSQL URL stands in for
    a store that workers on many hosts share."""
    with_api: bool = False
    """Also run the API server (``tempo-agents serve``) in its own process: every run then gets a reader on its
    run stream through that process (:func:`read_run_stream`), checked by guarantee 7."""
    recovery_bound: float | None = None
    """Guarantee 3's time bound in seconds (``bench/chaos.py`` sets one); None: every execution a kill interrupted
    must start again on another worker, with no bound on when (how long depends on how busy the machine is)."""
    api: ApiProcess | None = field(init=False, default=None)
    task_queue: str = field(default_factory=lambda: f"chaos-{uuid.uuid4()}")
    kills: list[Kill] = field(default_factory=list)
    followers: list[RunFollower] = field(default_factory=list)
    may_resume: asyncio.Event = field(default_factory=asyncio.Event)
    pool: WorkerPool = field(init=False)
    app: App = field(init=False)
    tail: ExecLogTail = field(init=False)
    _tasks: dict[str, asyncio.Task[RunOutcome]] = field(default_factory=dict)
    _readers: dict[str, asyncio.Task[list[tuple[int, str]]]] = field(default_factory=dict)
    stream_events: int = 0
    """Events the readers through the API server received, over every run."""

    def __post_init__(self) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.exec_log = self.work_dir / "exec.log"
        self.store_url = self.store_url or f"sqlite:///{self.work_dir / 'store.db'}"
        self.pool = WorkerPool(
            address=self.address,
            store_url=self.store_url,
            task_queue=self.task_queue,
            exec_log=self.exec_log,
            log_dir=self.work_dir,
            size=self.workers,
        )
        self.app = build_app(self.store_url, self.task_queue)
        self.app.use_client(self.client)
        self.tail = ExecLogTail(self.exec_log)

    async def start(self) -> None:
        """Start the workers (and the API server, :attr:`with_api`) and wait until they serve."""
        if self.with_api:
            self.api = ApiProcess(
                address=self.address,
                store_url=self.store_url,
                task_queue=self.task_queue,
                log_path=self.work_dir / "api.log",
            )
        await self.pool.start()
        if self.api is not None:
            await self.api.wait_ready()

    async def stop(self) -> None:
        for reader in self._readers.values():
            reader.cancel()
        await self.pool.stop()
        if self.api is not None:
            await self.api.stop()

    @property
    def run_ids(self) -> list[str]:
        return [f.run_id for f in self.followers if f.run_id]

    async def start_runs(self, agent_ids: Sequence[str]) -> None:
        for index, agent_id in enumerate(agent_ids):
            follower = RunFollower(self.app, agent_id, self.may_resume)
            await follower.start(f"chaos run {len(self.followers)} ({agent_id}, {index})")
            self.followers.append(follower)
            self._tasks[follower.run_id] = asyncio.create_task(follower.follow())
            if self.api is not None:
                self._readers[follower.run_id] = asyncio.create_task(read_run_stream(self.api.url, follower.run_id))

    def all_done(self) -> bool:
        return all(task.done() for task in self._tasks.values())

    async def wait_runs(self, timeout: float) -> dict[str, RunOutcome]:
        """Wait up to ``timeout`` s for every run; runs still open then are ``unfinished``."""
        tasks = list(self._tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        outcomes: dict[str, RunOutcome] = {}
        for follower in self.followers:
            task = self._tasks[follower.run_id]
            if task.done() and task.exception() is None:
                outcomes[follower.run_id] = task.result()
            else:
                detail = f"still open {timeout:.0f} s after the last disruption"
                if task.done():
                    detail = f"following it raised {task.exception()!r}"
                task.cancel()
                outcomes[follower.run_id] = RunOutcome(follower.agent_id, "unfinished", detail)
        return outcomes

    async def kill_worker(self, slot: int, *, restart: bool = True) -> Kill:
        """SIGKILL the worker in ``slot``, record what was saved at that moment, and (``restart``) start a new one."""
        worker, sent = await self.pool.kill(slot)
        # The store first, then the log: an outcome in the snapshot was saved before any line past the position.
        saved = await saved_outcomes(self.app.store, self.run_ids)
        kill = Kill("worker", worker.name, sent, self.tail.size(), saved)
        self.kills.append(kill)
        if restart:
            self.pool.restart(slot)
        return kill

    def write_kills(self) -> None:
        (self.work_dir / "kills.json").write_text(json.dumps([k.to_json() for k in self.kills], indent=1))

    async def verdict(self, outcomes: dict[str, RunOutcome]) -> Report:
        self.write_kills()
        runs = {run: {"agentId": o.agent_id, "status": o.status, "detail": o.detail} for run, o in outcomes.items()}
        (self.work_dir / "outcomes.json").write_text(json.dumps(runs, indent=1))
        report = await check(self.app.store, self.exec_log, self.kills, outcomes, self.recovery_bound)
        if self.with_api:
            await self._check_readers(report, outcomes)
        return report

    async def _check_readers(self, report: Report, outcomes: dict[str, RunOutcome]) -> None:
        """Guarantee 7: each run's reader, attached through the API server, saw its journal exactly once."""
        if self._readers:
            await asyncio.wait(list(self._readers.values()), timeout=60)
        for run_id in outcomes:
            task = self._readers.get(run_id)
            if task is None:
                report.add(7, run_id, "no reader was attached through the API server")
                continue
            if not task.done() or task.exception() is not None:
                detail = "still open" if not task.done() else repr(task.exception())
                task.cancel()
                report.add(7, run_id, f"the reader through the API server did not end cleanly: {detail}")
                continue
            journal = await self.app.store.read_chunks(run_id, 0, 1_000_000)
            check_stream(report, run_id, journal, task.result())
            self.stream_events += len(task.result())


# Scenarios ----------------------------------------------------------------------------------------


def mix(runs: int, suspend_runs: int) -> list[str]:
    """Agent ids for ``runs`` runs, ``suspend_runs`` of them suspending (spread through the list)."""
    ids = ["chaos"] * runs
    for i in range(min(suspend_runs, runs)):
        ids[(i * runs) // max(1, suspend_runs)] = "chaos-suspend"
    return ids


KILL_MOMENTS = ("random", "after-tool-end")
"""When a kill lands: at a random moment (on a worker that is executing something, within 3 s), or just after a
tool execution ends (its outcome is being saved and reported: the window where a saved result can be lost)."""


async def _pick_victim(world: ChaosWorld, moment: str, rng: random.Random) -> int:
    """A slot whose worker is ready (a worker still starting holds no work: killing it proves nothing)."""
    deadline = time.monotonic() + WORKER_READY_TIMEOUT
    while not any(w is not None and w.ready for w in world.pool.slots):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no worker became ready within {WORKER_READY_TIMEOUT:.0f} s")
        world.pool.supervise()
        await asyncio.sleep(0.05)
    slots = [s for s in range(len(world.pool.slots)) if world.pool.worker(s).ready]
    if moment == "after-tool-end":
        world.tail.poll()
        seen = len(world.tail.ended)
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and not world.all_done():
            world.tail.poll()
            for worker, key, _ in world.tail.ended[seen:]:
                slot = world.pool.slot_of(worker)
                if key[1] == "tool" and slot in slots:
                    return slot
            seen = len(world.tail.ended)
            await asyncio.sleep(0.002)
    deadline = time.monotonic() + 3.0
    while True:
        world.tail.poll()
        busy = [s for s in slots if world.tail.busy(world.pool.worker(s).name)]
        if busy or time.monotonic() > deadline or world.all_done():
            return rng.choice(busy or slots)
        await asyncio.sleep(0.002)


async def random_worker_kills(
    world: ChaosWorld,
    *,
    runs: int,
    suspend_runs: int,
    kills: int,
    gap: tuple[float, float],
    settle: float,
    rng: random.Random,
    on_kill: Callable[[Kill], Awaitable[None]] | None = None,
    restart: bool = True,
    moments: Sequence[str] = KILL_MOMENTS,
) -> Report:
    """Start the runs, then SIGKILL a worker ``kills`` times, ``gap`` seconds apart (random), each restarted at once:
    at one of ``moments`` chosen at random, by default half the time one executing something (waiting up to 3 s for
    one to be), half the time the first to finish a tool execution (:data:`KILL_MOMENTS`). Suspended runs are
    resumed as they suspend. Wait up to ``settle`` s after the last kill for the runs to end, and check. Without
    ``restart`` a killed worker stays dead: the others finish its runs."""
    world.may_resume.set()
    await world.start()
    await world.start_runs(mix(runs, suspend_runs))
    for number in range(kills):
        if world.all_done():
            _say(f"every run ended after {number} kill(s); no more kills")
            break
        await asyncio.sleep(rng.uniform(*gap))
        world.pool.supervise()
        slot = await _pick_victim(world, rng.choice(moments), rng)
        kill = await world.kill_worker(slot, restart=restart)
        if on_kill is not None:
            await on_kill(kill)
    outcomes = await world.wait_runs(settle)
    return await world.verdict(outcomes)


async def consecutive_kills_of_one_call(
    world: ChaosWorld, *, deaths: int, wait_for_restart: float, settle: float, agent_id: str = "chaos-long"
) -> Report:
    """One run of a long agent (``chaos-long``: the long call is an activity; ``chaos-long-local``: a local
    activity): SIGKILL the worker executing its long call as soon as each attempt starts, ``deaths`` times in a
    row; then let it finish and check."""
    from tests.support.chaos.app import LONG_CALLS

    long_call = LONG_CALLS[agent_id]
    await world.pool.start()
    await world.start_runs([agent_id])
    run_id = world.run_ids[0]
    target: Key = (run_id, "tool", long_call, "first")
    seen = 0
    for number in range(deaths):
        deadline = time.monotonic() + wait_for_restart
        victim: str | None = None
        while victim is None and time.monotonic() < deadline and not world.all_done():
            world.tail.poll()
            starts = [w for w, key, _ in world.tail.started if key == target]
            if len(starts) > seen:
                seen = len(starts)
                victim = starts[-1]
            else:
                await asyncio.sleep(0.01)
        if victim is None:
            state = "the run ended" if world.all_done() else f"no new attempt within {wait_for_restart:.0f} s"
            _say(f"death {number + 1}/{deaths}: {state}; stopping the kills")
            break
        slot = world.pool.slot_of(victim)
        if slot is None:
            break
        await world.kill_worker(slot)
        _say(f"death {number + 1}/{deaths}: killed {victim} during {long_call}")
    outcomes = await world.wait_runs(settle)
    return await world.verdict(outcomes)


@dataclass
class ServerChaos:
    """The Temporal dev server on a data file, SIGKILLed and restarted on the same file and port."""

    db_path: Path
    port: int
    server: DevServer | None = None
    restarts: int = 0

    async def start(self) -> DevServer:
        self.server = DevServer(db_filename=self.db_path, port=self.port, startup_timeout=60.0)
        await self.server.start()
        return self.server

    async def kill(self) -> float:
        """SIGKILL the server (no SIGTERM first) and wait until it is dead; returns when the signal was sent."""
        assert self.server is not None
        process = self.server._process
        assert process is not None
        sent = time.time()
        process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(process.wait)
        await self.server.stop()  # releases the data file's lock and the log; the process is gone already
        return sent

    async def restart(self) -> None:
        await self.start()
        self.restarts += 1

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()


async def connect(address: str) -> Client:
    return await Client.connect(address, data_converter=pydantic_data_converter)


async def server_kills(
    world: ChaosWorld, server: ServerChaos, *, runs: int, suspend_runs: int, downtime: float, settle: float
) -> tuple[Report, list[float]]:
    """SIGKILL the dev server while runs are in flight, restart it on the same file; then again once the
    suspending runs are suspended; resume them from this process; wait and check. Also returns, per restart,
    seconds from the restart to the next execution-log line (work resuming)."""
    await world.pool.start()
    await world.start_runs(mix(runs, suspend_runs))
    stalls: list[float] = []

    async def kill_and_restart(why: str, *, then: Callable[[], None] = lambda: None) -> None:
        sent = await server.kill()
        saved = await saved_outcomes(world.app.store, world.run_ids)
        world.kills.append(Kill("server", "server", sent, world.tail.size(), saved))
        _say(f"server SIGKILLed ({why}); down for {downtime:.1f} s")
        await asyncio.sleep(downtime)
        await server.restart()
        restarted = time.time()
        world.pool.supervise()
        then()  # suspended runs can only make progress once they are resumed
        mark = world.tail.size()
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline and not world.all_done():
            if world.tail.size() > mark:
                break
            await asyncio.sleep(0.05)
        world.tail.poll()
        later = [t for _, _, t in world.tail.started if t >= restarted]
        stalls.append((min(later) - restarted) if later else float("nan"))
        _say(f"server restarted; work resumed after {stalls[-1]:.1f} s")

    # In flight: wait until the runs are well under way (some tool executions logged).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        world.tail.poll()
        if len(world.tail.started) >= 3 * runs:
            break
        await asyncio.sleep(0.05)
    await kill_and_restart("runs in flight")
    # Suspended: wait until every suspending run is suspended, then kill it again.
    suspending = [f for f in world.followers if f.agent_id == "chaos-suspend"]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(f.suspended.wait() for f in suspending)), settle)
    await kill_and_restart("runs suspended", then=world.may_resume.set)
    outcomes = await world.wait_runs(settle)
    return await world.verdict(outcomes), stalls
