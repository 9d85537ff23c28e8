"""A soak: an hour (or ``--minutes``) of mixed work against real processes, sampled every 10 s, then checked.

    python bench/soak.py [--minutes 60] [--store sqlite|postgresql] [--concurrency 4] [--kill-every 180]
                         [--settle 180] [--out bench/results] [--no-plot] [--keep DIR]

Processes: the embedded Temporal dev server on a data file, two worker subprocesses (``tempo-agents worker`` for the
chaos App, ``tests/support/chaos/app.py``), the API server with the dashboard (``tempo-agents serve``) in its own
process, and this one (the client). Every process shares one store: a SQLite file, or with ``--store postgresql`` a
durable PostgreSQL server this script starts (``tests/support/postgres_server.py``).

The work, ``--concurrency`` runs under way at every moment, all through the API server over HTTP: runs started with
``POST /api/agents/:id/stream`` and read to the end of their first segment; runs that wait for a person answered
from the API (``POST /api/runs/:id/resume``) or from the dashboard's answer route (``POST /api/inbox/answer``);
runs cancelled while they wait and while they run (``POST /api/runs/:id/cancel``); runs of a parent whose sub-agent
runs as a child workflow. Every run also has a reader following its whole journal through the API server
(``GET /api/runs/:id/stream``, reconnecting with ``Last-Event-ID``). The second worker is SIGKILLed every
``--kill-every`` seconds and restarted; the first is never killed, so its memory can be followed for the whole soak.
On PostgreSQL the database is stopped three times: a fast shutdown (at a quarter of the soak), a SIGKILL of the
postmaster (at half), and a fast shutdown for 30 s (at three quarters); nothing but the store's own retries brings
the workers and readers back, and the figures say how long the runs under way stood still.

Every 10 s: resident memory, open file descriptors, threads and asyncio tasks of the dev server, the API server, both
workers and this process (tasks as each Python process reports them, ``tests/support/chaos/task_census.py``), the
store's size, the load average, and the latency of the starts (request to response headers), first chunks (request
to the first chunk) and resumes (the answer sent to the continuation's first chunk at the reader).

At the end: the chaos checker (``tests/support/chaos/check.py``: nothing lost, journals contiguous, every final text
right, every reader saw every chunk once), the parents' and the cancelled runs' journals, the slopes (least squares,
per hour) of memory, descriptors, threads and tasks of the processes that live the whole soak after warm-up (the
first quarter, at most 10 min; the dev server's memory is shown but not judged: Temporal keeps every run it has
seen, so it grows with the runs started, given per run), and the latency of the first third against the last. It
writes ``soak-<store>-<minutes>m.json`` (every sample, latency and figure, the verdict, the machine's load) and,
unless ``--no-plot``, a PNG beside it (matplotlib: ``pip install .[bench]``). The last line is quotable::

    soak: store=sqlite minutes=60 runs=N kills=N violations=0 ... verdict=pass

It stops by itself: the work stops at ``--minutes``, runs still under way get ``--settle`` seconds, then it checks.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support, from any directory

import httpx
import psycopg
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import CancelledError
from temporalio.service import RPCError

from bench._common import bench_parser, out, run_as_module
from tempo_agents.worker.dev_server import free_port
from tempo_agents.workflows.payloads import RunResult
from tests.support.chaos.app import PARENT_AGENT, child_run_id
from tests.support.chaos.check import Kill, RunOutcome, check, check_stream, saved_outcomes
from tests.support.chaos.server_chaos import ServerChaos, connect
from tests.support.chaos.task_census import CENSUS_DIR_ENV, read_census, read_thread_names
from tests.support.chaos.world import ChaosWorld
from tests.support.postgres_server import PostgresServer, find_bindir
from tests.support.soak.check import Bounds, Verdict, check_cancelled, check_parent, drift, percentile, slopes
from tests.support.soak.processes import busiest_processes, load_average, process_figures, tree_rss_mb

SAMPLE_SECONDS = 10.0
KINDS = (
    "plain",
    "answer-api",
    "parent",
    "answer-dashboard",
    "plain",
    "cancel-waiting",
    "answer-api",
    "cancel-running",
    "parent",
    "answer-dashboard",
)
"""The runs started, in turn."""
AGENT_OF = {
    "plain": "chaos",
    "answer-api": "chaos-suspend",
    "answer-dashboard": "chaos-suspend",
    "cancel-waiting": "chaos-suspend",
    "cancel-running": "chaos",
    "parent": PARENT_AGENT,
}
WAITING_CALL = "call_2_2"
"""The call of ``chaos-suspend`` that waits for a person."""
JUDGED = ("dev-server", "api", "worker-steady")
"""The processes that live the whole soak: their slopes decide whether it is flat, but for :data:`REPORTED`."""
REPORTED = (("dev-server", "rss_mb"),)
"""Slopes shown, not judged: the Temporal dev server keeps every run it has seen (until the namespace's retention,
a day at least), so its memory grows with the runs started; the figures give it per run."""
OUTAGES = ((0.25, "fast", 0.0), (0.5, "kill", 0.0), (0.75, "fast", 30.0))
"""PostgreSQL only: (fraction of the soak, how it stops, seconds down)."""


def _say(line: str) -> None:
    out(f"[soak {time.strftime('%H:%M:%S')}] {line}")


@dataclass
class Trip:
    """One run the soak started, and what it saw of it."""

    number: int
    kind: str
    run_id: str = ""
    phase: str = "starting"
    """``starting``, ``running``, ``waiting`` (for a person), ``done``."""
    events: list[tuple[int, str]] = field(default_factory=list)
    """What its reader through the API server received: (offset, chunk type)."""
    event_times: list[float] = field(default_factory=list)
    status: str = ""
    detail: str = ""
    reader_error: str = ""

    @property
    def agent_id(self) -> str:
        return AGENT_OF[self.kind]


@dataclass
class Outage:
    how: str
    down_seconds: float
    at: float
    run_stalls: list[float] = field(default_factory=list)
    """Per run under way: seconds from the database accepting connections again to its journal's next append."""
    reader_stalls: list[float] = field(default_factory=list)
    """Per run under way: seconds from then to its reader's next event."""
    stopped_for: float = 0.0
    """Seconds from the stop's start to the database accepting connections again (the stop, the time down, the
    start and its recovery); a run under way stood still this long plus its figure in :attr:`run_stalls`."""

    def to_json(self) -> dict[str, Any]:
        return {
            "how": self.how,
            "downSeconds": self.down_seconds,
            "stoppedForSeconds": round(self.stopped_for, 2),
            "at": round(self.at, 1),
            "runsUnderWay": len(self.run_stalls),
            "runStoodStill": _spread(self.run_stalls),
            "readerStoodStill": _spread(self.reader_stalls),
        }


def _spread(values: Sequence[float]) -> dict[str, float | int]:
    return {
        "p50": round(percentile(values, 0.5), 3),
        "p95": round(percentile(values, 0.95), 3),
        "max": round(max(values, default=float("nan")), 3),
        "count": len(values),
    }


class Soak:
    def __init__(self, args: argparse.Namespace, world: ChaosWorld, server: ServerChaos, work: Path) -> None:
        self.args = args
        self.world = world
        self.server = server
        self.work = work
        self.census = work / "census"
        self.rng = random.Random(args.seed)
        self.began = time.monotonic()
        self.duration = args.minutes * 60.0
        self.trips: list[Trip] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.readers: dict[str, asyncio.Task[None]] = {}
        self.latency: dict[str, list[tuple[float, float]]] = {"start": [], "first-chunk": [], "resume": []}
        self.samples: list[dict[str, Any]] = []
        self.outages: list[Outage] = []
        self.http_errors: dict[str, int] = {}
        self.postgres: PostgresServer | None = None
        self.stop_work = asyncio.Event()
        self.database_down = False
        self.give_up_at = self.began + self.duration + args.settle
        base = world.api.url if world.api is not None else ""
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=50)
        self.http = httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(15.0, read=120.0), limits=limits)

    def now(self) -> float:
        return time.monotonic() - self.began

    def _error(self, what: str) -> None:
        self.http_errors[what] = self.http_errors.get(what, 0) + 1

    # The work -----------------------------------------------------------------------------------

    async def launch(self) -> None:
        number = 0
        while self.now() < self.duration:
            active = sum(1 for trip in self.trips if trip.phase != "done")
            if active < self.args.concurrency:
                trip = Trip(number, KINDS[number % len(KINDS)])
                number += 1
                self.trips.append(trip)
                task = asyncio.create_task(self.follow(trip))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
                await asyncio.sleep(self.args.pace)
            else:
                await asyncio.sleep(0.1)
        self.stop_work.set()

    async def follow(self, trip: Trip) -> None:
        try:
            await self._follow(trip)
        except Exception as error:  # reported as the run's outcome: the verdict counts it
            trip.status, trip.detail = "unfinished", f"the soak's follower raised {error!r}"
            _say(f"run {trip.number} ({trip.kind}): {trip.detail}")
        finally:
            trip.phase = "done"

    async def _follow(self, trip: Trip) -> None:
        await self._start(trip)
        if trip.kind == "cancel-running":
            await self._until(trip, lambda: any(kind == "tool-call" for _, kind in trip.events))
            await self._cancel(trip)
        elif trip.agent_id == "chaos-suspend":
            await self._until(trip, lambda: self._suspended_at(trip) is not None)
            trip.phase = "waiting"
            await asyncio.sleep(self.rng.uniform(0.3, 2.0))  # a person reads the question
            if trip.kind == "cancel-waiting":
                await self._cancel(trip)
            else:
                await self._answer(trip)
            trip.phase = "running"
        await self._outcome(trip)

    async def _start(self, trip: Trip) -> None:
        while trip.run_id == "":
            if time.monotonic() > self.give_up_at:
                raise RuntimeError("no start was accepted before the soak gave up")
            sent = time.monotonic()
            body = {"messages": f"soak run {trip.number} ({trip.kind})"}
            try:
                async with self.http.stream("POST", f"/api/agents/{trip.agent_id}/stream", json=body) as response:
                    if response.status_code != 200:
                        self._error(f"start {response.status_code}")
                        await response.aread()
                        await asyncio.sleep(1.0)
                        continue
                    self.latency["start"].append((self.now(), time.monotonic() - sent))
                    async for line in response.aiter_lines():
                        if not line.startswith("data: ") or line == "data: [DONE]":
                            continue
                        if trip.run_id == "":
                            trip.run_id = json.loads(line[6:])["runId"]
                            self.latency["first-chunk"].append((self.now(), time.monotonic() - sent))
                            trip.phase = "running"
                            self.readers[trip.run_id] = asyncio.create_task(self.read(trip))
                            if trip.kind == "cancel-running":
                                break
            except httpx.HTTPError as error:
                self._error(f"start {type(error).__name__}")
                if trip.run_id == "":
                    await asyncio.sleep(1.0)

    async def _until(self, trip: Trip, condition: Any) -> None:
        while not condition():
            if time.monotonic() > self.give_up_at:
                raise RuntimeError(f"still waiting at the soak's end ({len(trip.events)} events read)")
            if trip.run_id in self.readers and self.readers[trip.run_id].done():
                return
            await asyncio.sleep(0.02)

    @staticmethod
    def _suspended_at(trip: Trip) -> int | None:
        for offset, kind in trip.events:
            if kind == "tool-call-suspended":
                return offset
        return None

    async def _post(self, what: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response | None:
        """POST until the server gives an answer that is not a 5xx (the store may be down); None at the end."""
        while time.monotonic() < self.give_up_at:
            try:
                response = await self.http.post(path, json=body)
            except httpx.HTTPError as error:
                self._error(f"{what} {type(error).__name__}")
                await asyncio.sleep(1.0)
                continue
            if response.status_code < 500:
                return response
            self._error(f"{what} {response.status_code}")
            await asyncio.sleep(1.0)
        return None

    async def _answer(self, trip: Trip) -> None:
        suspended_finish = max(offset for offset, _ in trip.events)
        sent = time.monotonic()
        if trip.kind == "answer-api":
            body = {"toolCallId": WAITING_CALL, "resumeData": {"ok": True}}
            response = await self._post("resume", f"/api/runs/{trip.run_id}/resume", body)
        else:
            body = {"runId": trip.run_id, "toolCallId": WAITING_CALL, "action": "resume", "resumeData": {"ok": True}}
            response = await self._post("answer", "/api/inbox/answer", body)
        if response is None or response.status_code not in (200, 409):
            status = response.status_code if response is not None else "no answer"
            raise RuntimeError(f"the answer was refused: {status} {response.text if response is not None else ''}")
        await self._until(trip, lambda: bool(trip.events) and trip.events[-1][0] > suspended_finish)
        self.latency["resume"].append((self.now(), time.monotonic() - sent))

    async def _cancel(self, trip: Trip) -> None:
        response = await self._post("cancel", f"/api/runs/{trip.run_id}/cancel")
        if response is not None and response.status_code == 409:  # it ended first: then it is a plain run
            trip.kind = "plain" if trip.kind == "cancel-running" else trip.kind

    async def _outcome(self, trip: Trip) -> None:
        handle = self.world.client.get_workflow_handle(trip.run_id, result_type=RunResult)
        while True:
            try:
                result = await asyncio.wait_for(handle.result(), 30)
            except TimeoutError:
                if time.monotonic() > self.give_up_at:
                    trip.status, trip.detail = "unfinished", "still open when the soak gave up"
                    return
                continue
            except WorkflowFailureError as error:
                cancelled = isinstance(error.cause, CancelledError)
                trip.status, trip.detail = ("cancelled", "") if cancelled else ("failed", str(error.cause or error))
                return
            except RPCError:
                await asyncio.sleep(0.5)
                continue
            trip.status, trip.detail = "completed", result.finish_reason
            return

    async def read(self, trip: Trip) -> None:
        """Follow the run's journal through the API server until ``[DONE]``, reconnecting after the last event."""
        last: int | None = None
        while time.monotonic() < self.give_up_at + 60:
            headers = {"Last-Event-ID": str(last)} if last is not None else {}
            try:
                async with self.http.stream("GET", f"/api/runs/{trip.run_id}/stream", headers=headers) as response:
                    if response.status_code != 200:
                        self._error(f"reader {response.status_code}")
                        await response.aread()
                        await asyncio.sleep(1.0)
                        continue
                    event_id: int | None = None
                    async for line in response.aiter_lines():
                        if line.startswith("id: "):
                            event_id = int(line[4:])
                        elif line == "data: [DONE]":
                            return
                        elif line.startswith("data: ") and event_id is not None:
                            trip.events.append((event_id, json.loads(line[6:])["type"]))
                            trip.event_times.append(time.monotonic())
                            last, event_id = event_id, None
            except httpx.HTTPError as error:
                self._error(f"reader {type(error).__name__}")
            await asyncio.sleep(0.5)
        trip.reader_error = "the reader never got [DONE]"

    # Disruptions ---------------------------------------------------------------------------------

    def _active_run_ids(self) -> list[str]:
        ids = []
        for trip in self.trips:
            if trip.run_id and trip.phase != "done":
                ids.append(trip.run_id)
                if trip.kind == "parent":
                    ids.append(child_run_id(trip.run_id))
        return ids

    async def kill_workers(self) -> None:
        """SIGKILL the second worker every ``--kill-every`` seconds, half a period off the database's stops, and
        never while the database is down: a kill's record reads the store (what was saved when the worker died),
        and a record read late would place the kill after work that followed it."""
        pool = self.world.pool
        next_kill = self.args.kill_every / 2
        while not self.stop_work.is_set():
            pool.supervise()
            if self.now() >= next_kill and not self.database_down:
                next_kill += self.args.kill_every
                worker, sent = await pool.kill(1)
                saved = await self._saved_now()
                self.world.kills.append(Kill("worker", worker.name, sent, self.world.tail.size(), saved))
                pool.restart(1)
                _say(f"SIGKILLed {worker.name}; {len(self._active_run_ids())} runs under way")
            await asyncio.sleep(0.5)

    async def _saved_now(self) -> frozenset[tuple[str, str, str]]:
        while True:
            try:
                return await saved_outcomes(self.world.app.store, self._active_run_ids())
            except Exception as error:  # the database may be down: try again
                self._error(f"saved-outcomes {type(error).__name__}")
                await asyncio.sleep(1.0)

    async def restart_database(self) -> None:
        assert self.postgres is not None
        for fraction, how, down in OUTAGES:
            while self.now() < fraction * self.duration:
                if self.stop_work.is_set():
                    return
                await asyncio.sleep(0.5)
            await self._outage(how, down)

    async def _outage(self, how: str, down: float) -> None:
        assert self.postgres is not None
        url = self.world.store_url
        running = [t for t in self.trips if t.run_id and t.phase == "running"]
        run_ids = [t.run_id for t in running]
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            before = await _heads(conn, run_ids)
        outage = Outage(how, down, self.now())
        _say(f"PostgreSQL: {how} stop, down {down:.0f} s; {len(running)} runs running")
        stopping = time.monotonic()
        self.database_down = True
        await asyncio.to_thread(self.postgres.halt, how)
        await asyncio.sleep(down)
        await asyncio.to_thread(self.postgres.start_again)
        back = time.monotonic()
        self.database_down = False
        outage.stopped_for = back - stopping
        seen = {t.run_id: len(t.event_times) for t in running}
        moved: dict[str, float] = {}
        read: dict[str, float] = {}
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            while time.monotonic() - back < 300 and (len(moved) < len(running) or len(read) < len(running)):
                heads = await _heads(conn, run_ids)
                for trip in running:
                    if trip.run_id not in moved and heads.get(trip.run_id, 0) > before.get(trip.run_id, 0):
                        moved[trip.run_id] = time.monotonic() - back
                    if trip.run_id not in read:
                        fresh = [t for t in trip.event_times[seen[trip.run_id] :] if t >= back]
                        if fresh:
                            read[trip.run_id] = fresh[0] - back
                        elif trip.phase == "done" or len(trip.event_times) > seen[trip.run_id]:
                            read[trip.run_id] = max(0.0, trip.event_times[-1] - back) if trip.event_times else 0.0
                await asyncio.sleep(0.02)
        outage.run_stalls = sorted(moved.values())
        outage.reader_stalls = sorted(read.values())
        self.outages.append(outage)
        _say(f"PostgreSQL back; runs stood still {_spread(outage.run_stalls)}, readers {_spread(outage.reader_stalls)}")

    # Samples ------------------------------------------------------------------------------------

    def processes(self) -> dict[str, int]:
        """The processes sampled, by role: this one, the dev server, the API server and both workers."""
        pool = self.world.pool
        found = {"soak": os.getpid()}
        dev = self.server.server._process if self.server.server is not None else None
        if dev is not None:
            found["dev-server"] = dev.pid
        if self.world.api is not None:
            found["api"] = self.world.api.process.pid
        for slot, name in ((0, "worker-steady"), (1, "worker-killed")):
            worker = pool.slots[slot]
            if worker is not None:
                found[name] = worker.process.pid
        return found

    async def _store_mb(self) -> float | None:
        if self.postgres is None:
            path = Path(self.world.store_url.removeprefix("sqlite:///"))
            files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
            return round(sum(f.stat().st_size for f in files if f.exists()) / 1e6, 2)
        try:
            async with await psycopg.AsyncConnection.connect(self.world.store_url, connect_timeout=2) as conn:
                cursor = await conn.execute("SELECT pg_database_size(current_database())")
                row = await cursor.fetchone()
                return round(int(row[0]) / 1e6, 2) if row else None
        except psycopg.Error:
            return None

    async def sample(self) -> None:
        while True:
            row: dict[str, Any] = {"t": round(self.now(), 1), "load": load_average(), "processes": {}}
            for name, pid in self.processes().items():
                figures = process_figures(pid)
                if figures is None:
                    continue
                figures["tasks"] = len(asyncio.all_tasks()) if name == "soak" else read_census(self.census, pid)
                row["processes"][name] = figures
            if self.postgres is not None:
                row["postgresRssMb"] = tree_rss_mb(self.postgres.process.pid)
            row["storeMb"] = await self._store_mb()
            row["runsStarted"] = sum(1 for t in self.trips if t.run_id)
            row["runsUnderWay"] = sum(1 for t in self.trips if t.phase != "done")
            window = self.now() - SAMPLE_SECONDS
            for what, values in self.latency.items():
                recent = [v for t, v in values if t >= window]
                row[what] = {"p50": percentile(recent, 0.5), "p95": percentile(recent, 0.95), "count": len(recent)}
            self.samples.append(row)
            if len(self.samples) % 6 == 1:
                steady = row["processes"].get("worker-steady", {})
                _say(
                    f"t={row['t']:.0f}s load={row['load'][0]} runs={row['runsStarted']} "
                    f"worker rss={steady.get('rss_mb')}MB fds={steady.get('fds')} store={row['storeMb']}MB"
                )
            await asyncio.sleep(SAMPLE_SECONDS)

    # The verdict --------------------------------------------------------------------------------

    async def verdict(self) -> Verdict:
        store = self.world.app.store
        outcomes: dict[str, RunOutcome] = {}
        parents: list[Trip] = []
        cancelled: list[Trip] = []
        for trip in self.trips:
            if not trip.run_id:
                continue
            if trip.kind == "parent":
                parents.append(trip)
                child = await self._child_outcome(child_run_id(trip.run_id))
                outcomes[child_run_id(trip.run_id)] = child
            elif trip.kind.startswith("cancel"):
                cancelled.append(trip)
                continue
            status = trip.status if trip.status in ("completed", "failed") else "unfinished"
            if trip.kind != "parent":
                outcomes[trip.run_id] = RunOutcome(trip.agent_id, status, trip.detail)
        report = await check(store, self.world.exec_log, self.world.kills, outcomes, None)
        for trip in parents:
            report.runs += 1
            if trip.status != "completed" or trip.detail != "stop":
                report.add(
                    2 if trip.status == "failed" else 5, trip.run_id, f"the parent ended {trip.status} {trip.detail}"
                )
                report.failed_runs += trip.status == "failed"
                report.unfinished_runs += trip.status == "unfinished"
            entries = await store.read_chunks(trip.run_id, 0, 1_000_000)
            relayed = await store.read_chunks(child_run_id(trip.run_id), 0, 1_000_000)
            check_parent(report, trip.run_id, entries, await store.get_transcript(trip.run_id), relayed)
        executed = self._executed()
        for trip in cancelled:
            report.runs += 1
            entries = await store.read_chunks(trip.run_id, 0, 1_000_000)
            check_cancelled(report, trip.run_id, trip.agent_id, trip.status, entries, executed.get(trip.run_id, set()))
        for trip in self.trips:
            if not trip.run_id:
                continue
            if trip.reader_error:
                report.add(7, trip.run_id, trip.reader_error)
            check_stream(report, trip.run_id, await store.read_chunks(trip.run_id, 0, 1_000_000), trip.events)
        bounds = Bounds(
            rss_mb_per_hour=self.args.rss_bound,
            fds_per_hour=self.args.fd_bound,
            threads_per_hour=self.args.thread_bound,
            tasks_per_hour=self.args.task_bound,
        )
        warmup = min(600.0, self.duration / 4)
        found = slopes(self.samples, JUDGED, warmup, bounds)
        judged = [s for s in found if (s.process, s.measure) not in REPORTED]
        reported = [s for s in found if (s.process, s.measure) in REPORTED]
        drifts = [drift(what, values, self.duration, bounds) for what, values in self.latency.items()]
        return Verdict(report, judged, drifts, reported)

    async def _child_outcome(self, run_id: str) -> RunOutcome:
        handle = self.world.client.get_workflow_handle(run_id, result_type=RunResult)
        try:
            result = await asyncio.wait_for(handle.result(), 60)
        except WorkflowFailureError as error:
            return RunOutcome("chaos", "failed", str(error.cause or error))
        except (TimeoutError, RPCError) as error:
            return RunOutcome("chaos", "unfinished", repr(error))
        return RunOutcome("chaos", "completed", result.finish_reason)

    def _executed(self) -> dict[str, set[str]]:
        from tests.support.chaos.check import executions, read_log

        executed: dict[str, set[str]] = {}
        for execution in executions(read_log(self.world.exec_log)):
            if execution.key[1] == "tool":
                executed.setdefault(execution.run_id, set()).add(execution.key[2])
        return executed


async def _heads(conn: psycopg.AsyncConnection[tuple[Any, ...]], run_ids: Sequence[str]) -> dict[str, int]:
    while True:
        try:
            cursor = await conn.execute(
                "SELECT run_id, next_seq FROM tempo_agents.journal_head WHERE run_id = ANY(%s)", (list(run_ids),)
            )
            return {str(run_id): int(seq) for run_id, seq in await cursor.fetchall()}
        except psycopg.OperationalError:
            await asyncio.sleep(0.1)


# Running it ---------------------------------------------------------------------------------------


async def soak(args: argparse.Namespace) -> int:
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="soak-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ[CENSUS_DIR_ENV] = str(work / "census")  # the workers and the API server count their tasks
    machine: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "loadAtStart": load_average(),
        "busiestAtStart": busiest_processes(),
        "memTotalMb": _mem_total_mb(),
    }
    _say(f"{args.minutes:g} min on {args.store}; load {machine['loadAtStart']} on {machine['cpus']} CPUs; {work}")
    postgres: PostgresServer | None = None
    store_url = ""
    if args.store == "postgresql":
        bindir = find_bindir()
        if bindir is None:
            out("PostgreSQL is not installed (apt-get install postgresql, or set TEMPO_AGENTS_PG_BIN)")
            return 2
        postgres = PostgresServer(bindir, durable=True)
        store_url = postgres.create_database()
    server = ServerChaos(work / "temporal.db", free_port())
    await server.start()
    assert server.server is not None
    client = await connect(server.server.address)
    world = ChaosWorld(work / "runs", client, server.server.address, workers=2, store_url=store_url, with_api=True)
    await world.start()
    runner = Soak(args, world, server, work)
    runner.postgres = postgres
    background = [asyncio.create_task(runner.sample()), asyncio.create_task(runner.kill_workers())]
    if postgres is not None:
        background.append(asyncio.create_task(runner.restart_database()))
    try:
        await runner.launch()
        _say(f"work stopped after {runner.now():.0f} s; {len(runner.tasks)} runs under way get {args.settle:.0f} s")
        if runner.tasks:
            await asyncio.wait(set(runner.tasks), timeout=max(1.0, runner.give_up_at - time.monotonic()))
        for task in background:
            task.cancel()
        readers = [task for task in runner.readers.values() if not task.done()]
        if readers:
            await asyncio.wait(readers, timeout=30)
        for task in readers:
            task.cancel()
        machine["loadAtEnd"] = load_average()
        machine["busiestAtEnd"] = busiest_processes()
        machine["pythonThreadsAtEnd"] = {  # by name: what a rising thread count is made of
            name: read_thread_names(runner.census, pid)
            for name, pid in runner.processes().items()
            if name not in ("soak", "dev-server")
        }
        verdict = await runner.verdict()
    finally:
        await runner.http.aclose()
        await world.stop()
        await server.stop()
        if postgres is not None:
            postgres.stop()
    return _report(args, runner, verdict, machine)


def _mem_total_mb() -> int:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    return 0


def _report(args: argparse.Namespace, runner: Soak, verdict: Verdict, machine: dict[str, Any]) -> int:
    loads = [s["load"][0] for s in runner.samples]
    machine["loadDuring"] = {
        "min": min(loads, default=0),
        "median": percentile(loads, 0.5),
        "max": max(loads, default=0),
    }
    kinds: dict[str, int] = {}
    for trip in runner.trips:
        if trip.run_id:
            kinds[trip.kind] = kinds.get(trip.kind, 0) + 1
    figures = {
        "command": "python bench/soak.py " + " ".join(sys.argv[1:]),
        "store": args.store,
        "minutes": args.minutes,
        "concurrency": args.concurrency,
        "killEvery": args.kill_every,
        "machine": machine,
        "runsByKind": kinds,
        "latency": {what: _spread([v for _, v in values]) for what, values in runner.latency.items()},
        "outages": [o.to_json() for o in runner.outages],
        "httpErrors": runner.http_errors,
        "verdict": verdict.to_json(),
        "samples": runner.samples,
        "latencySeries": {
            what: [[round(t, 2), round(v, 4)] for t, v in values] for what, values in runner.latency.items()
        },
    }
    target = Path(args.out)
    target.mkdir(parents=True, exist_ok=True)
    stem = f"soak-{args.store}-{args.minutes:g}m"
    (target / f"{stem}.json").write_text(json.dumps(figures, indent=1))
    if not args.no_plot:
        from bench._soak_plot import plot

        plot(figures, target / f"{stem}.png")
    out(f"\nsamples and verdict in {target / (stem + '.json')}")
    out(f"load average during the soak: {machine['loadDuring']} on {machine['cpus']} CPUs")
    out(verdict.report.summary(20))
    for slope in verdict.slopes:
        out(
            f"  {slope.process:14} {slope.measure:8} {slope.first:9.1f} -> {slope.last:9.1f}  "
            f"slope {slope.per_hour:+9.2f}/h (bound {slope.bound:g}) {'flat' if slope.flat else 'GROWS'}"
        )
    started_per_hour = sum(kinds.values()) / (args.minutes / 60)
    for slope in verdict.reported:
        per_run = slope.per_hour * 1024 / started_per_hour if started_per_hour else float("nan")
        out(
            f"  {slope.process:14} {slope.measure:8} {slope.first:9.1f} -> {slope.last:9.1f}  "
            f"slope {slope.per_hour:+9.2f}/h, {per_run:+.1f} KB per run started (reported, not judged: Temporal's "
            "own, keeping every run it has seen)"
        )
    for item in verdict.drifts:
        out(
            f"  {item.what:12} p50 {item.first_p50:.3f}s -> {item.last_p50:.3f}s, p95 {item.first_p95:.3f}s -> "
            f"{item.last_p95:.3f}s ({item.first_count}/{item.last_count}) {'steady' if item.steady else 'DRIFTS'}"
        )
    for outage in runner.outages:
        out(f"  PostgreSQL {outage.to_json()}")
    rss = {s.process: s.per_hour for s in [*verdict.reported, *verdict.slopes] if s.measure == "rss_mb"}
    fds = {s.process: s.per_hour for s in verdict.slopes if s.measure == "fds"}
    line = (
        f"soak: store={args.store} minutes={args.minutes:g} runs={verdict.report.runs} kills={verdict.report.kills} "
        f"violations={len(verdict.report.violations)} failed={verdict.report.failed_runs} "
        f"unfinished={verdict.report.unfinished_runs} "
        + "rss-slope(MB/h) "
        + ",".join(f"{p}={v:+.1f}" for p, v in rss.items())
        + " fd-slope(/h) "
        + ",".join(f"{p}={v:+.1f}" for p, v in fds.items())
        + " "
        + " ".join(
            f"{d.what} p50 {d.first_p50:.2f}->{d.last_p50:.2f}s p95 {d.first_p95:.2f}->{d.last_p95:.2f}s"
            for d in verdict.drifts
        )
        + (f" db-restarts={len(runner.outages)}" if runner.outages else "")
        + f" load={machine['loadDuring']['median']} verdict={'pass' if verdict.passed else 'FAIL'}"
    )
    out(line)
    return 0 if verdict.passed else 1


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--minutes", type=float, default=60.0, help="how long the work goes on (default 60)")
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--concurrency", type=int, default=4, help="runs under way at every moment (default 4)")
    parser.add_argument("--pace", type=float, default=0.5, help="seconds between two starts at least (default 0.5)")
    parser.add_argument("--kill-every", type=float, default=180.0, help="seconds between worker SIGKILLs (180)")
    parser.add_argument("--settle", type=float, default=180.0, help="seconds runs under way get at the end (180)")
    parser.add_argument("--rss-bound", type=float, default=Bounds.rss_mb_per_hour, help="MB per hour")
    parser.add_argument("--fd-bound", type=float, default=Bounds.fds_per_hour, help="descriptors per hour")
    parser.add_argument("--thread-bound", type=float, default=Bounds.threads_per_hour, help="threads per hour")
    parser.add_argument("--task-bound", type=float, default=Bounds.tasks_per_hour, help="asyncio tasks per hour")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"), help="where JSON/PNG go")
    parser.add_argument("--no-plot", action="store_true", help="write no PNG (no matplotlib needed)")
    parser.add_argument("--keep", metavar="DIR", help="data and logs in DIR (default: a temporary directory)")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.minutes > 24 * 60:
        parser.error("--minutes must be between 0 and 1440")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    limit = args.minutes * 60 + args.settle + 900  # a hard stop, whatever hangs
    try:
        return asyncio.run(asyncio.wait_for(soak(args), limit))
    except TimeoutError:
        out(f"soak: gave up after {limit:.0f} s (hard limit) verdict=FAIL")
        return 1


if __name__ == "__main__":
    run_as_module("soak")
