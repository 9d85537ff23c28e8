"""Crash safety under many kills: worker subprocesses SIGKILLed under agent runs, and what it cost.

    python bench/chaos.py [--kills 100] [--runs 40] [--suspend-runs 8] [--workers 2] [--gap 0.2 0.8]
                          [--consecutive 10] [--server] [--settle 240] [--seed N] [--keep DIR]
                          [--store sqlite|postgresql] [--api]

The scenario of ``tests/durability/test_chaos.py`` at scale, on a file-backed embedded dev server: ``--runs`` runs
of the chaos App (``tests/support/chaos/app.py``: 7 model steps, two parallel tools per step, ``--suspend-runs`` of
them suspending once and resumed at once) on ``--workers`` worker subprocesses (the ``tempo-agents worker`` CLI),
and ``--kills`` SIGKILLs of a worker ``--gap`` seconds apart (each restarted at once). Then ``--consecutive``: one
run whose long tool call has its worker killed that many times in a row. ``--server`` adds the dev-server scenario
(SIGKILL while runs are in flight and while runs are suspended, restart on the same file). Every scenario is checked
by ``tests/support/chaos/check.py``. ``--store postgresql`` puts every process on one PostgreSQL database (a server
this bench starts in a temporary directory, ``tests/support/postgres_server.py``) instead of a SQLite file: the
many-hosts setup. ``--api`` also runs the API server (``tempo-agents serve``) in its own process and attaches a
reader to every run's ``GET /api/runs/{id}/stream`` through it (guarantee 7: every chunk exactly once). See
bench/README.md for every figure.

The last line is quotable::

    chaos: kills=100 runs=40 tool-executions=N re-executed-saved=N failed-runs=N unfinished-runs=N
    journal-violations=N recovery p50=..s p95=..s max=..s not-resumed=N consecutive=10/10 survived=yes

(on one line).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support.chaos, from any directory

from bench._common import bench_parser, busy_warning, out, quantile, run_as_module
from tempo_agents.worker.dev_server import free_port
from tests.support.chaos.check import RECOVERY_BOUND_SECONDS, Report
from tests.support.chaos.scenarios import consecutive_kills_of_one_call, random_worker_kills, server_kills
from tests.support.chaos.server_chaos import ServerChaos, connect
from tests.support.chaos.world import ChaosWorld
from tests.support.postgres_server import PostgresServer, find_bindir


def _seconds(values: Sequence[float]) -> str:
    if not values:
        return "p50=- p95=- max=-"
    return f"p50={quantile(values, 0.5):.1f}s p95={quantile(values, 0.95):.1f}s max={max(values):.1f}s"


def show(title: str, report: Report, elapsed: float, violations_shown: int) -> None:
    recoveries = report.recovery_seconds()
    never = sum(1 for r in report.recoveries if r.seconds is None)
    over = sum(1 for s in recoveries if s > RECOVERY_BOUND_SECONDS)
    out(f"\n== {title} ({elapsed:.0f} s)")
    out(f"kills (worker SIGKILLs)          {report.kills}")
    out(f"runs                             {report.runs}")
    out(f"  failed                         {report.failed_runs}")
    out(f"  unfinished at the deadline     {report.unfinished_runs}")
    out(f"model-step executions            {report.model_executions}")
    out(f"tool executions                  {report.tool_executions}")
    out(f"  re-executions (all)            {report.re_executions}")
    out(f"  re-executions of saved outcomes {report.re_executions_of_saved}")
    out(f"step resets                      {report.step_resets}")
    out(f"journal violations               {report.journal_violations}")
    out(f"interrupted executions           {len(report.recoveries)}")
    out(f"  recovery {_seconds(recoveries)}  over {RECOVERY_BOUND_SECONDS:.0f} s: {over}, never resumed: {never}")
    out(f"runs under way at a kill: next execution after {_seconds(report.run_stalls)}")
    out(f"violations by guarantee          {report.by_guarantee() or 'none'}")
    groups = report.by_guarantee()
    each = max(3, violations_shown // max(1, len(groups)))
    for guarantee, count in groups.items():
        for violation in [v for v in report.violations if v.guarantee == guarantee][:each]:
            out(f"  {violation}")
        if count > each:
            out(f"  ... and {count - each} more of guarantee {guarantee}")


async def bench(args: argparse.Namespace) -> int:
    out(f"chaos bench: load average {os.getloadavg()[0]:.1f} at start{busy_warning()}")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="chaos-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    out(f"data, execution logs, kill records and worker logs in {work}")
    rng = random.Random(args.seed)
    postgres: PostgresServer | None = None
    if args.store == "postgresql":
        bindir = find_bindir()
        if bindir is None:
            out("PostgreSQL is not installed (apt-get install postgresql, or set TEMPO_AGENTS_PG_BIN)")
            return 2
        postgres = PostgresServer(bindir)
        out(f"store: PostgreSQL at {postgres.url()} (a fresh database per scenario)")
    try:
        return await _scenarios(args, work, rng, postgres)
    finally:
        if postgres is not None:
            postgres.stop()


async def _scenarios(args: argparse.Namespace, work: Path, rng: random.Random, postgres: PostgresServer | None) -> int:
    def store_url() -> str:
        return postgres.create_database() if postgres is not None else ""

    server = ServerChaos(work / "temporal.db", free_port())
    await server.start()
    assert server.server is not None
    address = server.server.address
    client = await connect(address)
    reports: list[tuple[str, Report]] = []
    try:
        world = ChaosWorld(
            work / "kills",
            client,
            address,
            workers=args.workers,
            store_url=store_url(),
            with_api=args.api,
            recovery_bound=RECOVERY_BOUND_SECONDS,
        )
        started = time.monotonic()
        try:
            report = await random_worker_kills(
                world,
                runs=args.runs,
                suspend_runs=args.suspend_runs,
                kills=args.kills,
                gap=(args.gap[0], args.gap[1]),
                settle=args.settle,
                rng=rng,
            )
        finally:
            await world.stop()
        show(f"{args.kills} worker kills under {args.runs} runs", report, time.monotonic() - started, args.show)
        api_events = world.stream_events
        if args.api:
            out(f"events read through the API server {api_events}")
        reports.append(("kills", report))

        if args.consecutive:
            world = ChaosWorld(
                work / "consecutive",
                client,
                address,
                workers=args.workers,
                store_url=store_url(),
                recovery_bound=RECOVERY_BOUND_SECONDS,
            )
            started = time.monotonic()
            try:
                report = await consecutive_kills_of_one_call(
                    world, deaths=args.consecutive, wait_for_restart=RECOVERY_BOUND_SECONDS + 80, settle=args.settle
                )
            finally:
                await world.pool.stop()
            show(f"{args.consecutive} consecutive deaths during one call", report, time.monotonic() - started, 20)
            reports.append(("consecutive", report))
    finally:
        await server.stop()

    if args.server:
        server = ServerChaos(work / "server-temporal.db", free_port())
        await server.start()
        try:
            assert server.server is not None
            client = await connect(server.server.address)
            world = ChaosWorld(
                work / "server",
                client,
                server.server.address,
                workers=args.workers,
                store_url=store_url(),
                recovery_bound=RECOVERY_BOUND_SECONDS,
            )
            started = time.monotonic()
            try:
                report, stalls = await server_kills(
                    world, server, runs=min(args.runs, 12), suspend_runs=4, downtime=1.0, settle=args.settle
                )
            finally:
                await world.pool.stop()
        finally:
            await server.stop()
        show("dev server SIGKILLed twice (runs in flight, runs suspended)", report, time.monotonic() - started, 20)
        out("work resumed after each server restart (s): " + ", ".join(f"{s:.1f}" for s in stalls))
        reports.append(("server", report))

    out(f"\nload average {os.getloadavg()[0]:.1f} at end")
    main = reports[0][1]
    consecutive = dict(reports).get("consecutive")
    line = (
        f"chaos: store={args.store} kills={main.kills} runs={main.runs} tool-executions={main.tool_executions} "
        f"re-executed-saved={main.re_executions_of_saved} failed-runs={main.failed_runs} "
        f"unfinished-runs={main.unfinished_runs} journal-violations={main.journal_violations} "
        f"recovery {_seconds(main.recovery_seconds())} "
        f"not-resumed={sum(1 for r in main.recoveries if r.seconds is None)}"
    )
    if args.api:
        line += f" stream-events={api_events} stream-violations={main.by_guarantee().get(7, 0)}"
    if consecutive is not None:
        survived = consecutive.failed_runs == 0 and consecutive.unfinished_runs == 0
        line += f" consecutive={consecutive.kills}/{args.consecutive} survived={'yes' if survived else 'no'}"
    if args.server:
        server_report = dict(reports)["server"]
        line += f" server-violations={len(server_report.violations)}"
    out(line)
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--kills", type=int, default=100, help="worker SIGKILLs (default 100)")
    parser.add_argument("--runs", type=int, default=40, help="runs, all started at once (default 40)")
    parser.add_argument("--suspend-runs", type=int, default=8, help="of which suspend once (default 8)")
    parser.add_argument("--workers", type=int, default=2, help="worker subprocesses (default 2)")
    parser.add_argument(
        "--gap", type=float, nargs=2, default=(0.2, 0.8), metavar=("MIN", "MAX"), help="seconds between kills"
    )
    parser.add_argument("--consecutive", type=int, default=10, help="deaths in a row during one call (0: skip)")
    parser.add_argument("--server", action="store_true", help="also SIGKILL and restart the dev server")
    parser.add_argument("--settle", type=float, default=240.0, help="seconds runs may take after the last kill")
    parser.add_argument("--seed", type=int, default=None, help="random seed (kill moments and victims)")
    parser.add_argument("--show", type=int, default=30, help="violations to print, shared by guarantee (default 30)")
    parser.add_argument(
        "--store", choices=("sqlite", "postgresql"), default="sqlite", help="the store every process shares"
    )
    parser.add_argument("--api", action="store_true", help="also read every run through an API server process")
    parser.add_argument("--keep", metavar="DIR", help="keep data and logs in DIR (default: a temporary directory)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("chaos")
