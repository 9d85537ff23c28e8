"""Everything one chaos scenario runs on (``ChaosWorld``): a store, an execution log, a worker pool, the API server
when asked for, the client's App, the runs and the kills; its verdict is the checker's."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.client import Client

from tempo_agents import App
from tests.support.chaos.app import build_app
from tests.support.chaos.check import Kill, Report, RunOutcome, check, check_stream, saved_outcomes
from tests.support.chaos.exec_log_tail import ExecLogTail
from tests.support.chaos.processes import ApiProcess, WorkerPool
from tests.support.chaos.runs import RunFollower, read_run_stream

__all__ = ["ChaosWorld"]


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
