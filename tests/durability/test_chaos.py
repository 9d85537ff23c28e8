"""Crash safety from outside: worker subprocesses and the Temporal dev server SIGKILLed under running agent runs.

The guarantees (tests/support/chaos/README.md) are checked by ``tests/support/chaos/check.py`` against the store and
the tools' execution log. The runtime's defaults are used as they are: nothing here tunes heartbeats or retries.
Each test prints its report (kills, executions, recovery times) and fails with every violation it found.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents.worker.dev_server import free_port
from tests.support.chaos.check import RECOVERY_BOUND_SECONDS, Report
from tests.support.chaos.scenarios import consecutive_kills_of_one_call, random_worker_kills, server_kills
from tests.support.chaos.server_chaos import ServerChaos, connect
from tests.support.chaos.world import ChaosWorld
from tests.support.postgres_server import PostgresServer

SETTLE_SECONDS = 150.0
"""How long runs may take to end after the last disruption before they count as unfinished (generous: this
bounds the test's length when the runtime misbehaves, it is not a timing assertion)."""


def _address(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


def _show(title: str, report: Report) -> None:
    seconds = report.recovery_seconds()
    print(f"\n{title}: {report.summary()}")
    if seconds:
        print(f"recovery after a kill: max {max(seconds):.1f} s over {len(seconds)} interrupted executions")


@pytest.mark.timeout(400)
async def test_random_worker_kills_lose_nothing(temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    """Guarantees 1-5: 8 runs on 2 workers, a random worker SIGKILLed 5 times at random moments."""
    world = ChaosWorld(tmp_path / "chaos", temporal_env.client, _address(temporal_env))
    try:
        report = await random_worker_kills(
            world, runs=8, suspend_runs=2, kills=5, gap=(0.8, 2.0), settle=SETTLE_SECONDS, rng=random.Random()
        )
    finally:
        await world.pool.stop()
    _show("random worker kills", report)
    assert report.violations == [], report.summary()
    assert report.kills >= 3, "the runs ended before the harness could kill workers"
    assert report.recoveries, "no kill interrupted an execution"


@pytest.mark.timeout(400)
async def test_ten_consecutive_worker_deaths_during_one_call(temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    """Guarantee 2: the worker executing one call dies 10 times in a row; the run still finishes, and
    guarantee 3: each time the call starts again elsewhere within the bound."""
    world = ChaosWorld(tmp_path / "chaos", temporal_env.client, _address(temporal_env))
    try:
        report = await consecutive_kills_of_one_call(
            world, deaths=10, wait_for_restart=RECOVERY_BOUND_SECONDS + 50, settle=SETTLE_SECONDS
        )
    finally:
        await world.pool.stop()
    _show("consecutive deaths", report)
    assert report.violations == [], report.summary()
    assert report.kills == 10, f"only {report.kills} deaths happened during the call"


@pytest.mark.timeout(400)
async def test_ten_consecutive_worker_deaths_during_one_local_call(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    """Guarantees 2 and 3 for a tool that runs as a local activity (inside the workflow task, no heartbeats): the
    worker executing it dies 10 times in a row; each time the call starts again elsewhere within the bound (the
    run's short workflow task timeout), and the run still finishes with every saved result kept."""
    world = ChaosWorld(tmp_path / "chaos", temporal_env.client, _address(temporal_env))
    try:
        report = await consecutive_kills_of_one_call(
            world,
            deaths=10,
            wait_for_restart=RECOVERY_BOUND_SECONDS + 50,
            settle=SETTLE_SECONDS,
            agent_id="chaos-long-local",
        )
    finally:
        await world.pool.stop()
    _show("consecutive deaths during a local call", report)
    assert report.violations == [], report.summary()
    assert report.kills == 10, f"only {report.kills} deaths happened during the call"


@pytest.mark.timeout(500)
async def test_server_sigkill_and_restart_with_runs_in_flight_and_suspended(tmp_path: Path) -> None:
    """Guarantee 6: the dev server (file-backed) is SIGKILLed while runs are in flight, restarted on the same file,
    SIGKILLed again while runs are suspended, restarted; the suspended runs are resumed; every run finishes."""
    server = ServerChaos(tmp_path / "temporal.db", free_port())
    await server.start()
    try:
        assert server.server is not None
        client = await connect(server.server.address)
        world = ChaosWorld(tmp_path / "chaos", client, server.server.address)
        try:
            report, stalls = await server_kills(
                world, server, runs=6, suspend_runs=3, downtime=2.0, settle=SETTLE_SECONDS
            )
        finally:
            await world.pool.stop()
    finally:
        await server.stop()
    _show("server kills", report)
    print("work resumed after each server restart (s): " + ", ".join(f"{s:.1f}" for s in stalls))
    assert server.restarts == 2
    assert report.violations == [], report.summary()


@pytest.mark.timeout(400)
async def test_many_hosts_share_a_postgresql_store(
    temporal_env: WorkflowEnvironment, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    """Two worker processes and an API server (``tempo-agents serve``) on one task queue share a PostgreSQL store,
    standing in for three hosts. The runs spread over both workers; one of them is SIGKILLed in the middle of the
    runs and not restarted, and the other finishes them: guarantees 1-5 from the store, and guarantee 7: a reader
    attached to each run through the API server's process saw every journal chunk exactly once."""
    world = ChaosWorld(
        tmp_path / "chaos",
        temporal_env.client,
        _address(temporal_env),
        store_url=postgres_server.create_database(),
        with_api=True,
    )
    try:
        report = await random_worker_kills(
            world,
            runs=6,
            suspend_runs=2,
            kills=1,
            gap=(2.0, 3.0),
            settle=SETTLE_SECONDS,
            rng=random.Random(),
            restart=False,
            moments=("random",),  # a worker executing something: the kill must cut work for the survivor to take
        )
    finally:
        await world.stop()
    _show("many hosts on PostgreSQL", report)
    print(f"events read through the API server: {world.stream_events}")
    assert report.violations == [], report.summary()
    assert report.kills == 1 and report.recoveries, "the kill interrupted nothing"
    world.tail.poll()
    (kill,) = world.kills
    survivor = world.pool.worker(1 - world.pool.slots.index(next(w for w in world.pool.slots if w and w.killed)))
    runs_by_worker: dict[str, set[str]] = {}
    for worker, key, started in world.tail.started:
        if started < kill.time:
            runs_by_worker.setdefault(worker, set()).add(key[0][:8])
    print("runs whose activities each worker executed before the kill:", runs_by_worker)
    assert set(runs_by_worker) == {kill.name, survivor.name}, "the runs did not spread over both workers"
    after = {worker for worker, _, started in world.tail.started if started > kill.time}
    assert after == {survivor.name}, f"after the kill, executions ran on {after}"
    ended = {key for worker, key, at in world.tail.ended if worker == kill.name and at < kill.time}
    cut = {key[0] for worker, key, at in world.tail.started if worker == kill.name and key not in ended}
    carried_on = {key[0] for _, key, started in world.tail.started if started > kill.time}
    assert cut and cut <= carried_on, "a run whose execution the kill cut was not carried on by the other worker"
    assert world.stream_events >= sum(1 for _ in world.run_ids) * 50, "the readers saw almost nothing"
