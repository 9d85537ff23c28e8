"""Ten thousand runs waiting for a person on one dev server: what starting them costs, what they cost a worker while
they wait, what the inbox and the runs table feel like, and what a restart of the server and the worker costs.

    python bench/waiting_10k.py [--runs 10000] [--store sqlite|postgresql] [--concurrency 50] [--no-browser]
                                [--no-baseline] [--keep DIR]

One embedded Temporal dev server on a data file (the Temporal server we can run here; with ``--store postgresql``
the App's store is a PostgreSQL server this script starts, ``tests/support/postgres_server.py``, while Temporal
itself keeps its SQLite file: PostgreSQL + a Temporal server, the dev server standing in for a production cluster).
The App is ``bench/_waiting_app.py``: the agent ``waiter`` asks a person at step 0 (a tool that suspends), is
resumed with an answer and finishes. Its worker is a subprocess (``tempo-agents worker``), so its memory is its own.

1. **Start and suspend**: ``--runs`` runs started, at most ``--concurrency`` at once, until the store lists every
   one waiting: runs per second, and the worker's resident memory before and with every run waiting (per run).
   The baseline: a hand-written Temporal workflow doing the same wait (``bench/_waiting_bare.py``: two no-op
   activities, a wait for a signal, two more) with its own worker subprocess, started and seen waiting the same way.
2. **Reading the waiting runs**: ``list_suspended_runs`` (every run, and a page), ``GET /api/inbox`` (a page),
   ``GET /api/agents/:agentId/suspended-runs`` (a page), the dashboard feed's poll (what every open dashboard costs
   every 0.5 s), ``GET /api/dashboard/runs?status=suspended``; the API server in this process. In a real
   Chromium (``tests/support/browser.py``, unless ``--no-browser``): the inbox's first paint (fresh and reload) and
   the runs table's filter answer.
3. **Restart**: the worker (SIGTERM) and the dev server stopped, the server started again on its data file, a new
   worker; the time until every run answers a query (``pending``), counted from the restart.
4. **Resume**: every run answered (``resume_stream``), at most ``--concurrency`` at once, and awaited; then every
   journal is checked: offsets contiguous, segments ``suspended`` then ``stop``, the ``ask`` call's result naming the
   run and carrying its answer, the final text :data:`FINAL_TEXT`. Nothing lost is ``lost=0``.

The last line is quotable::

    waiting_10k: store=sqlite runs=10000 start+suspend=..s (../s; bare ../s) worker +..KB/run (bare +..KB/run)
    list_suspended_runs p50=..ms inbox p50=..ms feed-poll p50=..ms inbox-paint=..ms filter=..ms
    restart: all answer a query after ..s resume=..s (../s) lost=0 load=..
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support and bench, from any directory

import httpx
from temporalio.client import Client
from temporalio.service import RPCError

from bench._common import bench_parser, out, quantile, run_as_module
from bench._waiting_app import AGENT_ID, ASK_CALL, FINAL_TEXT, build_app
from bench._waiting_bare import READY, BareWait
from tempo_agents.client.waiting_runs import waiting_page
from tempo_agents.server.run_views import list_runs
from tempo_agents.server.serving import ApiServer
from tempo_agents.worker.dev_server import DevServer, free_port
from tempo_agents.workflows.payloads import RunResult
from tests.support.chaos.server_chaos import connect
from tests.support.postgres_server import PostgresServer, find_bindir
from tests.support.soak.processes import busiest_processes, load_average, process_figures

REPO = Path(__file__).resolve().parent.parent
WORKER_READY = "polling task queue"
QUERY_PATIENCE = 3600.0
"""After the restart, how long a run may take to answer a query before it counts as never answering."""
PAGE = 50
"""The page size of the paged listings measured (``list_suspended_runs(limit=...)``, the suspended-runs route)."""
SETTLE_SECONDS = 5.0
"""Pause before reading a worker's memory (its last tasks finish, the allocator settles)."""


def _say(line: str) -> None:
    out(f"[waiting {time.strftime('%H:%M:%S')}] {line}")


async def _bounded(count: int, concurrency: int, work: Callable[[int], Awaitable[Any]]) -> list[Any]:
    """``work(i)`` for ``i`` in ``range(count)``, at most ``concurrency`` at once; results in order."""
    semaphore = asyncio.Semaphore(concurrency)

    async def one(index: int) -> Any:
        async with semaphore:
            return await work(index)

    return list(await asyncio.gather(*(one(i) for i in range(count))))


class Subprocess:
    """A worker subprocess whose output goes to a file; ready once the file says ``ready``."""

    def __init__(self, command: list[str], log: Path, ready: str) -> None:
        self.log = log
        self.ready = ready
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        with log.open("ab") as handle:
            self.process = subprocess.Popen(
                command, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )

    async def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.ready not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.log.name} did not start:\n{self.log.read_text(errors='replace')[-2000:]}")
            await asyncio.sleep(0.1)

    def rss_mb(self) -> float:
        figures = process_figures(self.process.pid)
        return float(figures["rss_mb"]) if figures else float("nan")

    async def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.to_thread(self.process.wait), 60)
            except TimeoutError:
                self.process.kill()
                await asyncio.to_thread(self.process.wait)


def _worker(address: str, store_url: str, task_queue: str, log: Path) -> Subprocess:
    command = [sys.executable, "-m", "tempo_agents.cli", "worker", "--app", "bench/_waiting_app.py:app"]
    command += ["--address", address, "--store", store_url, "--task-queue", task_queue]
    return Subprocess(command, log, WORKER_READY)


def _ms(values: Sequence[float]) -> str:
    return f"p50={quantile(values, 0.5) * 1000:.0f}ms p95={quantile(values, 0.95) * 1000:.0f}ms"


async def _timed(times: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    found = []
    for _ in range(times):
        began = time.monotonic()
        await call()
        found.append(time.monotonic() - began)
    return found


async def bench(args: argparse.Namespace) -> int:
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="waiting-10k-"))
    work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {"loadAtStart": load_average(), "busiestAtStart": busiest_processes(8)}
    _say(f"{args.runs} runs on {args.store}; load {figures['loadAtStart']} on {os.cpu_count()} CPUs; data in {work}")
    postgres: PostgresServer | None = None
    if args.store == "postgresql":
        bindir = find_bindir()
        if bindir is None:
            out("PostgreSQL is not installed (apt-get install postgresql, or set TEMPO_AGENTS_PG_BIN)")
            return 2
        postgres = PostgresServer(bindir)
        store_url = postgres.create_database()
    else:
        store_url = f"sqlite:///{work / 'store.db'}"
    port = free_port()
    server = DevServer(db_filename=work / "temporal.db", port=port, startup_timeout=120.0)
    await server.start()
    try:
        return await _measure(args, work, server, store_url, figures)
    finally:
        await server.stop()
        if postgres is not None:
            postgres.stop()


async def _measure(
    args: argparse.Namespace, work: Path, server: DevServer, store_url: str, figures: dict[str, Any]
) -> int:
    address = server.address
    client = await connect(address)
    if args.only_baseline:
        bare = await _bare(args, client, address, work)
        out(f"waiting_10k: bare runs={args.runs} {bare} load={load_average()[0]}")
        return 0
    task_queue = f"waiting-{uuid.uuid4().hex[:8]}"
    app = build_app(store_url, task_queue)
    app.use_client(client)
    worker = _worker(address, store_url, task_queue, work / "worker.log")
    await worker.wait_ready()
    await asyncio.sleep(SETTLE_SECONDS)
    idle = worker.rss_mb()

    # 1. Start and suspend ----------------------------------------------------------------------------
    run_ids = [f"waiting-{n:05d}" for n in range(args.runs)]
    began = time.monotonic()
    await _bounded(args.runs, args.concurrency, lambda i: app.agent(AGENT_ID).stream("file it", run_id=run_ids[i]))
    started = time.monotonic() - began
    while (await app.store.waiting_runs(task_queue, limit=1)).total < args.runs:
        await asyncio.sleep(0.5)
    suspended = time.monotonic() - began
    await asyncio.sleep(SETTLE_SECONDS)
    waiting_rss = worker.rss_mb()
    per_run_kb = (waiting_rss - idle) * 1024 / args.runs
    _say(
        f"started in {started:.1f} s, all waiting after {suspended:.1f} s ({args.runs / suspended:.0f}/s); worker "
        f"{idle:.0f} MB idle, {waiting_rss:.0f} MB with every run waiting (+{per_run_kb:.1f} KB/run)"
    )
    figures["start"] = {"startedSeconds": started, "allWaitingSeconds": suspended, "perSecond": args.runs / suspended}
    figures["worker"] = {"idleMb": idle, "waitingMb": waiting_rss, "perRunKb": per_run_kb}

    # 2. Reading the waiting runs -----------------------------------------------------------------
    try:
        await _reads(args, app, figures)
    except Exception as error:  # reported; the restart and the resumes still run
        figures["readsError"] = repr(error)
        _say(f"reading the waiting runs failed: {error!r}")

    # 3. Restart ---------------------------------------------------------------------------------------
    began = time.monotonic()
    await worker.stop()
    await server.stop()
    await server.start()
    worker = _worker(address, store_url, task_queue, work / "worker-after-restart.log")
    await worker.wait_ready()
    back = time.monotonic() - began
    client = await connect(address)
    app.use_client(client)

    give_up = began + QUERY_PATIENCE

    async def answers_a_query(index: int) -> bool:
        while time.monotonic() < give_up:
            try:
                await app.queries(run_ids[index]).pending()
                return True
            except Exception:  # the server or the worker still coming back: ask again
                await asyncio.sleep(0.5)
        return False

    answered = await _bounded(args.runs, args.concurrency, answers_a_query)
    answering = time.monotonic() - began
    silent = answered.count(False)
    _say(
        f"restart: server and worker back after {back:.1f} s, every run answered a query after {answering:.1f} s"
        + (f" ({silent} never did)" if silent else "")
    )
    figures["restart"] = {"serverAndWorkerSeconds": back, "allAnswerSeconds": answering, "neverAnswered": silent}

    # 4. Resume and check ------------------------------------------------------------------------
    began = time.monotonic()

    async def resume(index: int) -> str:
        try:
            stream = await app.agent(AGENT_ID).resume_stream({"ok": run_ids[index]}, run_id=run_ids[index])
            result = await stream.result()
        except Exception as error:  # counted as lost by the check
            return f"resuming failed: {error!r}"
        return result.text

    texts = await _bounded(args.runs, args.concurrency, resume)
    resumed = time.monotonic() - began
    lost = await _check(app, run_ids, texts)
    _say(f"resumed and finished in {resumed:.1f} s ({args.runs / resumed:.0f}/s); lost or wrong: {lost}")
    figures["resume"] = {"seconds": resumed, "perSecond": args.runs / resumed, "lost": lost}
    await worker.stop()

    # The baseline ---------------------------------------------------------------------------------
    if not args.no_baseline:
        figures["bare"] = await _bare(args, client, address, work)
    figures["loadAtEnd"] = load_average()
    _report(args, figures)
    await app.store.close()
    return 0 if lost == 0 else 1


async def _reads(args: argparse.Namespace, app: Any, figures: dict[str, Any]) -> None:
    listing = await _timed(5, lambda: app.list_suspended_runs(agent_id=AGENT_ID))
    listed = await app.list_suspended_runs(agent_id=AGENT_ID)
    listing_page = await _timed(20, lambda: app.list_suspended_runs(agent_id=AGENT_ID, limit=PAGE))
    feed = await _timed(
        20,
        lambda: asyncio.gather(
            waiting_page(app.store, app.client, app.task_queue, limit=100), list_runs(app, per_page=50)
        ),
    )
    api = ApiServer(app, port=0)
    await api.start()
    try:
        async with httpx.AsyncClient(base_url=api.url, timeout=120) as http:
            inbox = await _timed(20, lambda: http.get("/api/inbox"))
            first = (await http.get("/api/inbox")).json()
            table = await _timed(10, lambda: http.get("/api/dashboard/runs", params={"status": "suspended"}))
            route = f"/api/agents/{AGENT_ID}/suspended-runs"
            route_page = await _timed(20, lambda: http.get(route, params={"perPage": PAGE, "page": 1}))
        _say(
            f"list_suspended_runs ({listed.total} runs) {_ms(listing)}, a page of {PAGE} {_ms(listing_page)}; "
            f"GET /api/inbox {_ms(inbox)} (total {first.get('total')}); GET {route}?perPage={PAGE}&page=1 "
            f"{_ms(route_page)}; feed poll {_ms(feed)}; runs table (suspended) {_ms(table)}"
        )
        figures["reads"] = {
            "listSuspendedRuns": listing,
            "listed": listed.total,
            "listSuspendedRunsPage": listing_page,
            "suspendedRunsRoutePage": route_page,
            "inbox": inbox,
            "inboxTotal": first.get("total"),
            "feedPoll": feed,
            "runsTable": table,
        }
        if not args.no_browser:
            figures["browser"] = await _browser(api)
            _say(f"in Chromium: {figures['browser']}")
    finally:
        await api.stop()


async def _check(app: Any, run_ids: Sequence[str], texts: Sequence[str]) -> int:
    """Runs whose journal or final text is wrong (printed, a few)."""
    lost = 0
    for run_id, text in zip(run_ids, texts, strict=True):
        entries = await app.store.read_chunks(run_id, 0, 100_000)
        problems = []
        if [e.offset for e in entries] != list(range(len(entries))):
            problems.append("offsets not contiguous")
        finishes = [e.chunk["payload"]["stepResult"]["reason"] for e in entries if e.chunk["type"] == "finish"]
        if finishes != ["suspended", "stop"]:
            problems.append(f"segments end {finishes}")
        results = [
            e.chunk["payload"].get("result")
            for e in entries
            if e.chunk["type"] == "tool-result" and e.chunk["payload"].get("toolCallId") == ASK_CALL
        ]
        if results != [{"run": run_id, "answer": {"ok": run_id}}]:
            problems.append(f"the ask call's results are {results}")
        if text != FINAL_TEXT:
            problems.append(f"the final text is {text!r}")
        handle = app.client.get_workflow_handle(run_id, result_type=RunResult)
        try:
            reason = (await asyncio.wait_for(handle.result(), 60)).finish_reason
        except Exception as error:  # counted below
            reason = repr(error)
        if reason != "stop":
            problems.append(f"the workflow ended {reason}")
        if problems:
            lost += 1
            if lost <= 5:
                _say(f"run {run_id}: {'; '.join(problems)}")
    return lost


async def _browser(api: ApiServer) -> dict[str, float]:
    from tests.support.browser import RUNS_TABLE_PROBE, chromium

    painted = "addEventListener('tempo:inbox-painted', e => { window.__inbox = e.detail; })"
    found: dict[str, float] = {}
    async with chromium() as browser:
        context = await browser.new_context(viewport={"width": 1280, "height": 860})
        await context.add_init_script(painted)
        page = await context.new_page()
        await page.goto(api.url + "/#/inbox")
        await page.wait_for_function("window.__inbox", timeout=120_000)
        found["inboxFirstMs"] = float(await page.evaluate("window.__inbox.at"))
        await page.reload()
        await page.wait_for_function("window.__inbox", timeout=120_000)
        found["inboxReloadMs"] = float(await page.evaluate("window.__inbox.at"))
        await page.goto(api.url + "/#/runs")
        await page.locator("tbody tr").first.wait_for(timeout=120_000)
        table: dict[str, float] = await page.evaluate(RUNS_TABLE_PROBE)
        found["filterMs"] = float(table["filterMs"])
        found["longestFrameMs"] = float(table["maxFrameGapMs"])
        await context.close()
    return found


async def _bare(args: argparse.Namespace, client: Client, address: str, work: Path) -> dict[str, float]:
    task_queue = f"bare-{uuid.uuid4().hex[:8]}"
    worker = Subprocess([sys.executable, "bench/_waiting_bare.py", address, task_queue], work / "bare.log", READY)
    await worker.wait_ready()
    await asyncio.sleep(SETTLE_SECONDS)
    idle = worker.rss_mb()
    ids = [f"bare-{n:05d}-{task_queue}" for n in range(args.runs)]
    began = time.monotonic()
    handles = await _bounded(
        args.runs,
        args.concurrency,
        lambda i: client.start_workflow(BareWait.run, ids[i], id=ids[i], task_queue=task_queue),
    )

    async def until_waiting(index: int) -> None:
        while True:
            try:
                if await handles[index].query(BareWait.waiting):
                    return
            except RPCError:  # a query that timed out on a busy machine: ask again
                pass
            await asyncio.sleep(0.2)

    await _bounded(args.runs, args.concurrency, until_waiting)
    suspended = time.monotonic() - began
    await asyncio.sleep(SETTLE_SECONDS)
    waiting = worker.rss_mb()
    began = time.monotonic()

    async def answer(index: int) -> None:
        await handles[index].signal(BareWait.answer_it, {"ok": ids[index]})
        await handles[index].result()

    await _bounded(args.runs, args.concurrency, answer)
    resumed = time.monotonic() - began
    await worker.stop()
    per_run_kb = (waiting - idle) * 1024 / args.runs
    _say(
        f"bare Temporal: all waiting after {suspended:.1f} s ({args.runs / suspended:.0f}/s), worker {idle:.0f} -> "
        f"{waiting:.0f} MB (+{per_run_kb:.1f} KB/run), resumed in {resumed:.1f} s"
    )
    return {
        "allWaitingSeconds": suspended,
        "perSecond": args.runs / suspended,
        "idleMb": idle,
        "waitingMb": waiting,
        "perRunKb": per_run_kb,
        "resumeSeconds": resumed,
    }


def _report(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    reads = figures.get("reads", {"listSuspendedRuns": [], "inbox": [], "feedPoll": []})
    bare = figures.get("bare")
    browser = figures.get("browser", {})
    out(f"load average at start {figures['loadAtStart']}, at end {figures['loadAtEnd']} on {os.cpu_count()} CPUs")
    out("busiest processes at start: " + " | ".join(figures["busiestAtStart"][:6]))
    line = f"waiting_10k: store={args.store} runs={args.runs}"
    line += f" start+suspend={figures['start']['allWaitingSeconds']:.0f}s"
    line += f" ({figures['start']['perSecond']:.0f}/s"
    line += f"; bare {bare['perSecond']:.0f}/s)" if bare else ")"
    line += f" worker +{figures['worker']['perRunKb']:.1f}KB/run"
    line += f" (bare +{bare['perRunKb']:.1f}KB/run)" if bare else ""
    line += f" list_suspended_runs p50={quantile(reads['listSuspendedRuns'], 0.5) * 1000:.0f}ms"
    if reads.get("listSuspendedRunsPage"):
        line += f" (a page of {PAGE}: {quantile(reads['listSuspendedRunsPage'], 0.5) * 1000:.0f}ms)"
    line += f" inbox p50={quantile(reads['inbox'], 0.5) * 1000:.0f}ms"
    line += f" feed-poll p50={quantile(reads['feedPoll'], 0.5) * 1000:.0f}ms"
    if browser:
        line += f" inbox-paint={browser['inboxFirstMs']:.0f}ms filter={browser['filterMs']:.0f}ms"
    line += f" restart: all answer a query after {figures['restart']['allAnswerSeconds']:.0f}s"
    line += f" resume={figures['resume']['seconds']:.0f}s ({figures['resume']['perSecond']:.0f}/s)"
    line += f" lost={figures['resume']['lost']} load={figures['loadAtEnd'][0]}"
    figures["command"] = "python bench/waiting_10k.py " + " ".join(sys.argv[1:])
    figures["cpus"] = os.cpu_count()
    target = Path(args.out)
    target.mkdir(parents=True, exist_ok=True)
    (target / f"waiting-{args.store}-{args.runs}.json").write_text(json.dumps(figures, indent=1))
    out(line)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--runs", type=int, default=10_000, help="runs waiting at once (default 10000)")
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--concurrency", type=int, default=50, help="starts (and resumes) in flight (default 50)")
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium measurements")
    parser.add_argument("--no-baseline", action="store_true", help="skip the bare-Temporal baseline")
    parser.add_argument("--only-baseline", action="store_true", help="measure the bare-Temporal baseline alone")
    parser.add_argument("--keep", metavar="DIR", help="data and logs in DIR (default: a temporary directory)")
    parser.add_argument("--out", default=str(REPO / "bench" / "results"), help="where the JSON of the figures goes")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(bench(args))
    return 130


if __name__ == "__main__":
    run_as_module("waiting_10k")
