"""What one run costs, measured on this machine, and the capacity plan derived from it: what a deployment needs for
1,000,000 runs a day with 100,000 approvals waiting and 10,000 people watching (docs/concepts/capacity-plan.md).

    python bench/capacity.py [--runs 20] [--concurrency 5] [--store sqlite|postgresql|postgresql://...]
                             [--db-file PATH] [--runs-per-day N] [--waiting N] [--watchers N] [--peak-factor X]

One embedded dev server and two subprocesses, as a deployment runs them: a worker (``tempo-agents worker``) and an
API server (``tempo-agents serve``), both on ``bench/_capacity_app.py`` and the store ``--store`` names. The agent
``refunds`` is a representative run: three scripted model steps, a tool call (an activity), and a second tool call
that needs approval, so the run waits for a person. This process is the people: ``--runs`` runs are started over
HTTP (``POST /api/agents/refunds/generate``, answered once the run waits), then each approval is answered over
HTTP (``POST /api/agents/refunds/approve-tool-call-generate``), then each workflow is awaited to its close.

Per run, from the runs' histories (``fetch_history``) and the store before, during and after: history events and
bytes; workflow tasks, activity tasks, signals and updates; Temporal actions and state transitions estimated from
the events by type (``bench/_history_census.py``); store rows written and bytes grown (``bench/_store_census.py``:
rows added on SQLite, which keeps no write counts; inserted + updated + deleted on PostgreSQL); CPU of the worker,
the API server and the dev server (``/proc``) across the runs; bytes held per waiting run (its store rows and its
history while it waits). The memory of an idle SSE stream is ``bench/many_watchers.py``'s figure, not remeasured.

The anchor, in the same invocation on the same dev server: a hand-written Temporal workflow of the same shape
(``bench/_bare_approval.py``: as many no-op activities before a wait for a signal, and after it, as the agent run
scheduled), its worker in this process, ``--runs`` of them started, seen waiting, signalled and awaited.

Then the plan, by ``bench/_capacity_plan.py``'s ``derive_plan`` from the per-run figures (assumptions printed). The
last line is JSON: the per-run figures, the floor's, and the plan. CPU figures move with the machine's load;
counts and bytes do not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `bench` and `tests`, from any directory

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from bench._bare_approval import ANSWER_SIGNAL, BareApproval, BareShape, noop
from bench._capacity_app import AGENT_ID, FINAL_TEXT, TASK_QUEUE
from bench._capacity_plan import Assumptions, PerRun, Workload, derive_plan, plan_lines
from bench._common import (
    add_dev_server_arguments,
    add_store_argument,
    bench_parser,
    bench_store,
    busy_warning,
    describe_store,
    out,
    run_as_module,
    start_server,
    store_kind,
)
from bench._history_census import HistoryCensus, census
from bench._store_census import StoreCensus, store_census
from bench.waiting_10k import Subprocess
from tempo_agents.worker.dev_server import free_port
from tests.support.soak.processes import load_average

__all__ = ["IDLE_STREAM_KB", "main"]

IDLE_STREAM_KB = {"sqlite": 45.4, "postgresql": 49.0}
"""API server memory per idle SSE stream, from bench/README.md's many_watchers figures (1,000 streams over 100 runs,
2026-12-05): not remeasured here."""
PROMPT = "Order 1042 arrived damaged; please refund it."
_TICK = os.sysconf("SC_CLK_TCK")


# CPU from /proc ------------------------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, float] | None:
    """A process's parent pid and CPU seconds so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


def cpu_of(pid: int, *, with_children: bool = False) -> float:
    """CPU seconds of ``pid`` (and of its direct children: a postmaster's backends)."""
    own = _stat(pid)
    total = own[1] if own else 0.0
    if with_children:
        for entry in Path("/proc").iterdir():
            found = _stat(int(entry.name)) if entry.name.isdigit() else None
            if found and found[0] == pid:
                total += found[1]
    return total


def dev_server_pid(others: set[int]) -> int | None:
    """The embedded dev server: this process's child that is not one of ``others`` (the worker, the API)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) not in others:
            found = _stat(int(entry.name))
            if (
                found
                and found[0] == os.getpid()
                and "temporal" in (entry / "cmdline").read_bytes().decode(errors="ignore")
            ):
                return int(entry.name)
    return None


@dataclass
class Clocks:
    """The processes whose CPU is read: name to (pid, with children)."""

    pids: dict[str, tuple[int, bool]]

    def read(self) -> dict[str, float]:
        return {name: cpu_of(pid, with_children=kids) for name, (pid, kids) in self.pids.items()}


def cpu_ms_per_run(before: dict[str, float], after: dict[str, float], runs: int) -> dict[str, float]:
    return {name: (after[name] - before[name]) * 1000 / runs for name in before}


# The runs ------------------------------------------------------------------------------------------------------------


async def bounded(count: int, concurrency: int, one: Callable[[int], Awaitable[Any]]) -> list[Any]:
    gate = asyncio.Semaphore(concurrency)

    async def guarded(n: int) -> Any:
        async with gate:
            return await one(n)

    return list(await asyncio.gather(*(guarded(n) for n in range(count))))


async def start_waiting(http: httpx.AsyncClient) -> tuple[str, str]:
    """Start a run over HTTP; once it waits for the approval, its run id and the waiting call's id."""
    answer = await http.post(f"/api/agents/{AGENT_ID}/generate", json={"messages": PROMPT})
    body = answer.json()
    if answer.status_code != 200 or body.get("finishReason") != "suspended":
        raise RuntimeError(f"a run did not wait for its approval: {answer.status_code} {str(body)[:300]}")
    return str(body["runId"]), str(body["suspendPayload"]["toolCallId"])


async def approve(http: httpx.AsyncClient, run_id: str, call_id: str) -> None:
    answer = await http.post(
        f"/api/agents/{AGENT_ID}/approve-tool-call-generate", json={"runId": run_id, "toolCallId": call_id}
    )
    body = answer.json()
    if answer.status_code != 200 or FINAL_TEXT not in str(body.get("text")):
        raise RuntimeError(f"an approved run did not finish: {answer.status_code} {str(body)[:300]}")


async def histories(client: Client, workflow_ids: list[str]) -> list[list[HistoryEvent]]:
    return [list((await client.get_workflow_handle(w).fetch_history()).events) for w in workflow_ids]


@dataclass
class Measured:
    """What ``--runs`` runs cost, in all (divide by runs for per run)."""

    runs: int
    history: HistoryCensus
    waiting_history_bytes: int
    store: StoreCensus
    store_waiting: StoreCensus
    cpu_ms: dict[str, float]
    """Per run, by process."""
    shape: BareShape


def shape_of(events: list[HistoryEvent]) -> BareShape:
    """Activities the run scheduled before the answer's signal (or update), and after it."""
    before = after = 0
    answered = False
    for event in events:
        if event.event_type in (
            EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
            EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
        ):
            answered = True
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            after, before = (after + 1, before) if answered else (after, before + 1)
    return BareShape(before=before, after=after)


async def measure_agent(
    args: argparse.Namespace, client: Client, http: httpx.AsyncClient, store_url: str, clocks: Clocks
) -> Measured:
    for _ in range(args.warmup):
        await approve(http, *await start_waiting(http))
    first = store_census(store_url)
    cpu_before = clocks.read()
    waiting = await bounded(args.runs, args.concurrency, lambda _: start_waiting(http))
    held = store_census(store_url)
    waiting_history = census(await histories(client, [run_id for run_id, _ in waiting]))
    await bounded(args.runs, args.concurrency, lambda n: approve(http, *waiting[n]))
    for run_id, _ in waiting:
        await client.get_workflow_handle(run_id).result()
    cpu = cpu_ms_per_run(cpu_before, clocks.read(), args.runs)
    last = store_census(store_url)
    events = await histories(client, [run_id for run_id, _ in waiting])
    return Measured(
        args.runs, census(events), waiting_history.bytes, last.minus(first), held.minus(first), cpu, shape_of(events[0])
    )


async def until_waiting(handle: WorkflowHandle[Any, Any], before: int) -> None:
    """Until the bare run has completed its ``before`` activities and the workflow task after them."""
    completed = 0
    async for event in handle.fetch_history_events(wait_new_event=True):
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            completed += 1
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED and completed == before:
            return


async def measure_bare(args: argparse.Namespace, client: Client, shape: BareShape, server_pid: int | None) -> Measured:
    task_queue = f"bench-capacity-bare-{uuid.uuid4()}"
    clocks = Clocks({"this process (worker, client)": (os.getpid(), False)})
    if server_pid is not None:
        clocks.pids["dev server"] = (server_pid, False)
    async with Worker(client, task_queue=task_queue, workflows=[BareApproval], activities=[noop]):

        async def one(_: int) -> str:
            workflow_id = f"bare-{uuid.uuid4()}"
            handle = await client.start_workflow(BareApproval.run, shape, id=workflow_id, task_queue=task_queue)
            await until_waiting(handle, shape.before)
            return workflow_id

        cpu_before = clocks.read()
        ids = await bounded(args.runs, args.concurrency, one)
        waiting_history = census(await histories(client, ids))
        for workflow_id in ids:
            await client.get_workflow_handle(workflow_id).signal(ANSWER_SIGNAL)
        for workflow_id in ids:
            await client.get_workflow_handle(workflow_id).result()
        cpu = cpu_ms_per_run(cpu_before, clocks.read(), args.runs)
    return Measured(
        args.runs, census(await histories(client, ids)), waiting_history.bytes, StoreCensus(), StoreCensus(), cpu, shape
    )


# Output --------------------------------------------------------------------------------------------------------------


def per_run(measured: Measured, kind: str) -> PerRun:
    n = measured.runs
    store = measured.store
    writes = store.writes if store.writes is not None else sum(store.rows.values())
    return PerRun(
        actions=measured.history.actions / n,
        state_transitions=measured.history.state_transitions / n,
        history_events=measured.history.events / n,
        history_bytes=measured.history.bytes / n,
        store_row_writes=writes / n,
        store_bytes=store.bytes / n,
        worker_cpu_ms=measured.cpu_ms.get("worker", 0.0),
        api_cpu_ms=measured.cpu_ms.get("api server", 0.0),
        waiting_bytes=(measured.store_waiting.bytes + measured.waiting_history_bytes) / n,
        idle_stream_kb=IDLE_STREAM_KB[kind],
    )


def _row(name: str, tempo: float, bare: float | None, unit: str = "") -> str:
    ratio = f"{tempo / bare:.2f}x" if bare else "-"
    floor = f"{bare:,.1f}" if bare is not None else "-"
    return f"{name:<42}{tempo:>12,.1f}{floor:>12}{ratio:>9}  {unit}"


def report(agent: Measured, bare: Measured, kind: str) -> PerRun:
    n, b = agent.runs, bare.runs
    a_h, b_h = agent.history, bare.history
    out(
        f"\nper run (means over {n} runs; the floor: {bare.shape.before} + {bare.shape.after} no-op activities "
        f"around a signal)"
    )
    out(f"{'':<42}{'tempo':>12}{'floor':>12}{'ratio':>9}")
    for name, mine, theirs in (
        ("history events", a_h.events, b_h.events),
        ("history bytes (protobuf events)", a_h.bytes, b_h.bytes),
        ("workflow tasks", a_h.workflow_tasks, b_h.workflow_tasks),
        ("activity tasks", a_h.activity_tasks, b_h.activity_tasks),
        ("local activity tasks (one action each)", a_h.local_activity_tasks, b_h.local_activity_tasks),
        ("signals", a_h.signals, b_h.signals),
        ("updates", a_h.updates, b_h.updates),
        ("timers", a_h.timers, b_h.timers),
        ("search attribute and memo upserts", a_h.upserts, b_h.upserts),
        ("Temporal actions (estimate)", a_h.actions, b_h.actions),
        ("state transitions (estimate)", a_h.state_transitions, b_h.state_transitions),
        ("history bytes while waiting", agent.waiting_history_bytes, bare.waiting_history_bytes),
    ):
        out(_row(name, mine / n, theirs / b))
    out(
        _row(
            "dev server CPU ms",
            agent.cpu_ms.get("dev server", float("nan")),
            bare.cpu_ms.get("dev server", float("nan")),
        )
    )
    bare_worker = bare.cpu_ms["this process (worker, client)"]
    out(_row("worker CPU ms (floor: its worker + client)", agent.cpu_ms["worker"], bare_worker))
    out(_row("API server CPU ms", agent.cpu_ms["api server"], None))
    if "postgresql" in agent.cpu_ms:
        out(_row("PostgreSQL CPU ms", agent.cpu_ms["postgresql"], None))
    store = agent.store
    out(_row("store row writes (see below)", (store.writes or sum(store.rows.values())) / n, None))
    out(_row("store bytes grown", store.bytes / n, None))
    out(_row("store bytes while waiting", agent.store_waiting.bytes / n, None))
    written = "inserted + updated + deleted" if store.writes is not None else "rows added (SQLite counts no writes)"
    out(f"store row writes: {written}")
    out("store rows added per run by table: " + ", ".join(f"{t}={c / n:g}" for t, c in sorted(store.rows.items())))
    return per_run(agent, kind)


# The bench -----------------------------------------------------------------------------------------------------------


def _children(work: Path, address: str, store_url: str, api_port: int) -> list[Subprocess]:
    app = ["--app", "bench/_capacity_app.py:app", "--address", address, "--store", store_url]
    app += ["--task-queue", TASK_QUEUE]
    cli = [sys.executable, "-m", "tempo_agents.cli"]
    worker = Subprocess([*cli, "worker", *app], work / "worker.log", "polling task queue")
    api = Subprocess([*cli, "serve", *app, "--api-port", str(api_port)], work / "api.log", "HTTP API at")
    return [worker, api]


async def bench(args: argparse.Namespace) -> int:
    kind = store_kind(args.store)
    out(
        f"capacity: store={kind} ({describe_store(args.store)}), {args.runs} runs ({args.warmup} warm-up), "
        f"{args.concurrency} at once; load average {load_average()} on {os.cpu_count()} CPUs{busy_warning()}"
    )
    with tempfile.TemporaryDirectory() as folder, bench_store(args.store, Path(folder)) as store:
        env = await start_server(args.db_file, stock=args.stock_server)
        api_port = free_port()
        children = _children(Path(folder), env.client.service_client.config.target_host, store.url, api_port)
        try:
            for child in children:
                await child.wait_ready()
            worker, api = (child.process.pid for child in children)
            clocks = Clocks({"worker": (worker, False), "api server": (api, False)})
            server_pid = dev_server_pid({worker, api, store.server_pid or -1})
            if server_pid is not None:
                clocks.pids["dev server"] = (server_pid, False)
            out(f"processes: worker {worker}, API server {api}, dev server {server_pid}, postgresql {store.server_pid}")
            if store.server_pid is not None:
                clocks.pids["postgresql"] = (store.server_pid, True)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{api_port}", timeout=600) as http:
                agent = await measure_agent(args, env.client, http, store.url, clocks)
            bare = await measure_bare(args, env.client, agent.shape, server_pid)
        finally:
            for child in children:
                await child.stop()
            await env.shutdown()
    figures = report(agent, bare, kind)
    workload = Workload(args.runs_per_day, args.waiting, args.watchers, args.peak_factor)
    assumptions = Assumptions()
    plan = derive_plan(figures, workload, assumptions)
    out(f"\nplan (bench/_capacity_plan.py; assumptions: {asdict(assumptions)})")
    for line in plan_lines(plan, workload, assumptions):
        out(line)
    out(f"load average at the end {load_average()}")
    summary = {"store": kind, "runs": args.runs, "perRun": asdict(figures), "plan": plan.as_json()}
    summary["floorPerRun"] = {
        "historyEvents": bare.history.events / bare.runs,
        "historyBytes": bare.history.bytes / bare.runs,
        "actions": bare.history.actions / bare.runs,
        "stateTransitions": bare.history.state_transitions / bare.runs,
        "cpuMs": bare.cpu_ms,
    }
    out("capacity: " + json.dumps(summary, separators=(",", ":")))
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--runs", type=int, default=20, help="runs measured (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="runs before the measured ones (default 2)")
    parser.add_argument("--concurrency", type=int, default=5, help="runs started or answered at once (default 5)")
    add_store_argument(parser)
    add_dev_server_arguments(parser)
    defaults = Workload()
    parser.add_argument("--runs-per-day", type=int, default=defaults.runs_per_day)
    parser.add_argument("--waiting", type=int, default=defaults.waiting_approvals, help="approvals waiting at once")
    parser.add_argument("--watchers", type=int, default=defaults.watchers, help="SSE streams open at once")
    parser.add_argument("--peak-factor", type=float, default=defaults.peak_factor, help="the busiest second / mean")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("capacity")
