"""How long runs stand still after a PostgreSQL outage ends: the time from the database accepting connections
again to each run's next journal append.

    python bench/store_outage.py [--runs 8] [--outages 5,20,45] [--how kill|fast]

On a durable PostgreSQL this script starts (``tests/support/postgres_server.py`` with ``fsync`` and
``synchronous_commit`` on) and the embedded dev server: ``--runs`` runs of the chaos App
(``tests/support/chaos/app.py``: 7 model steps, two parallel tools per step, one of them a local activity) on an
in-process worker, with the store's default settings. Once every run has begun its first step, the postmaster is
stopped (``--how``: SIGKILL, or a fast shutdown) for each ``--outages`` length in turn (seconds), then started again
on the same data directory. The clock starts when the restarted server accepts a connection; a run's stall is the
time until its journal's head moves (read every 10 ms from a connection of this script's own). Every run must then
finish ``stop`` with a whole journal (the chaos checker).

The last lines are quotable, one per outage::

    store-outage: down=20s runs=8 stood-still p50=..s max=..s finished=8/8 journal-violations=0 (kill)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support, from any directory

import psycopg
from temporalio.client import Client

from bench._common import busy_warning, median, out, run_as_module, start_server
from tempo_agents.store.postgres import PostgresStore
from tempo_agents.workflows.payloads import RunResult
from tests.support.chaos import app as chaos
from tests.support.chaos.check import RunOutcome, check
from tests.support.postgres_server import PostgresServer, find_bindir

AGENTS = ("chaos", "chaos-long", "chaos-long-local")
POLL_SECONDS = 0.01
GIVE_UP_SECONDS = 600.0


async def _heads(conn: psycopg.AsyncConnection[tuple[int, ...]], run_ids: Sequence[str]) -> dict[str, int]:
    cursor = await conn.execute(
        "SELECT run_id, next_seq FROM tempo_agents.journal_head WHERE run_id = ANY(%s)", (list(run_ids),)
    )
    return {str(run_id): int(seq) for run_id, seq in await cursor.fetchall()}


async def _finished(store: PostgresStore, run_id: str) -> bool:
    return any(e.chunk["type"] == "finish" for e in await store.read_chunks(run_id, 0, 1_000_000))


async def one_outage(
    server: PostgresServer, client: Client, seconds: float, runs: int, how: str, work: Path
) -> tuple[list[float], int, int]:
    """Stall per run after the database came back, runs finished, journal violations."""
    exec_log = work / f"exec-{uuid.uuid4().hex[:8]}.log"
    os.environ[chaos.EXEC_LOG_ENV] = str(exec_log)
    os.environ[chaos.WORKER_ENV] = "in-process"
    url = server.create_database()
    store = PostgresStore(url)
    app = chaos.build_app(task_queue=f"outage-{uuid.uuid4().hex[:8]}")
    app.registry.use_store(store)
    app.use_client(client)
    agent_ids = [AGENTS[i % len(AGENTS)] for i in range(runs)]
    async with app.worker():
        streams = [await app.stream(agent_id, "go") for agent_id in agent_ids]
        run_ids = [s.run_id for s in streams]
        for run_id in run_ids:  # every run under way
            while len(await store.read_chunks(run_id, 0, 3)) < 3:
                await asyncio.sleep(0.02)
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            before = await _heads(conn, run_ids)
        await asyncio.to_thread(server.halt, how)
        await asyncio.sleep(seconds)
        await asyncio.to_thread(server.start_again)
        back = time.monotonic()
        stalls: dict[str, float] = {}
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            waiting = [r for r in run_ids if not await _finished(store, r)]
            while len(stalls) < len(waiting) and time.monotonic() - back < GIVE_UP_SECONDS:
                heads = await _heads(conn, waiting)
                for run_id in waiting:
                    if run_id not in stalls and heads.get(run_id, 0) > before.get(run_id, 0):
                        stalls[run_id] = time.monotonic() - back
                await asyncio.sleep(POLL_SECONDS)
        outcomes: dict[str, RunOutcome] = {}
        for run_id, agent_id in zip(run_ids, agent_ids, strict=True):
            handle = app.client.get_workflow_handle(run_id, result_type=RunResult)
            try:
                result = await asyncio.wait_for(handle.result(), GIVE_UP_SECONDS)
                outcomes[run_id] = RunOutcome(agent_id, "completed", result.finish_reason)
            except Exception as error:  # reported, not raised: the figure line says how many finished
                outcomes[run_id] = RunOutcome(agent_id, "failed", str(error))
    report = await check(store, exec_log, [], outcomes)
    await store.close()
    finished = sum(1 for o in outcomes.values() if o.status == "completed" and o.detail == "stop")
    return sorted(stalls.values()), finished, len(report.violations)


async def run(args: argparse.Namespace) -> int:
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)  # its reconnect warnings, every second of an outage
    bindir = find_bindir()
    if bindir is None:
        out("PostgreSQL is not installed (apt-get install postgresql, or set TEMPO_AGENTS_PG_BIN)")
        return 1
    outages = [float(x) for x in args.outages.split(",")]
    out(
        f"store outage: {args.runs} runs of the chaos App, postmaster stopped ({args.how}) for {outages} s"
        + busy_warning()
    )
    server = PostgresServer(bindir, durable=True)
    env = await start_server(None, stock=False)
    lines = []
    try:
        with tempfile.TemporaryDirectory(prefix="tempo-agents-outage-") as work:
            for seconds in outages:
                stalls, finished, violations = await one_outage(
                    server, env.client, seconds, args.runs, args.how, Path(work)
                )
                shown = ", ".join(f"{s:.2f}" for s in stalls)
                out(f"  down {seconds:g} s: stood still after the database came back (s): {shown}")
                lines.append(
                    f"store-outage: down={seconds:g}s runs={args.runs} stood-still p50={median(stalls):.2f}s "
                    f"max={max(stalls, default=float('nan')):.2f}s finished={finished}/{args.runs} "
                    f"journal-violations={violations} ({args.how})"
                )
    finally:
        await env.shutdown()
        server.stop()
    for line in lines:
        out(line)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--outages", default="5,20,45", help="outage lengths in seconds, comma-separated")
    parser.add_argument("--how", choices=("kill", "fast"), default="kill")
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    run_as_module("store_outage")
