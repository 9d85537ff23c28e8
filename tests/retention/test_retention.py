"""Retention: a closed run's records are deleted once its retention expires, by the worker's sweeper, from the store
and from Temporal, and are then gone from the API; runs kept longer (another resource's, another agent's) stay."""

from __future__ import annotations

import time
from datetime import timedelta
from functools import partial

import pytest

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.errors import ConfigurationError
from tempo_agents.retention import Retention, RetentionSweeper, SweepResult
from tempo_agents.threads.queued_runs import QUEUED_ON_KEY
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served
from tests.support.polling import until
from tests.support.store_contents import store_contents
from tests.support.thread_agents import Gate, gated_agent

pytestmark = pytest.mark.timeout(300)


def _echo(agent_id: str) -> Agent:
    return Agent(
        id=agent_id, model=ScriptedModel(lambda request: ScriptedResponse(text=f"noted {request.messages[-1].text}"))
    )


def test_a_resource_s_retention_wins_over_its_agent_s_and_the_default() -> None:
    retention = Retention(
        keep=timedelta(days=30), agents={"triage": timedelta(days=7)}, resources={"acme": timedelta(days=365)}
    )
    assert retention.keep_for("triage", "acme") == timedelta(days=365)
    assert retention.keep_for("triage", "globex") == timedelta(days=7)
    assert retention.keep_for("billing", None) == timedelta(days=30)
    assert Retention(agents={"triage": timedelta(days=1)}).keep_for("billing", None) is None  # kept for ever
    assert not Retention().applies and Retention(resources={"acme": timedelta(days=1)}).applies


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"keep": timedelta(0)}, "keep must be longer than zero"),
        ({"resources": {"acme": timedelta(seconds=-1)}}, "resources\\['acme'\\]"),
        ({"batch": 0}, "batch >= 1"),
    ],
)
def test_a_retention_that_cannot_be_kept_is_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Retention(**settings)  # type: ignore[arg-type]


async def test_the_worker_deletes_expired_runs_and_keeps_the_others(make_app: AppFactory) -> None:
    retention = Retention(
        keep=timedelta(seconds=1),
        resources={"globex": timedelta(days=30)},
        agents={"archivist": timedelta(days=30)},
        every=timedelta(milliseconds=300),
        batch=1,  # one run a batch: the sweep goes on over several
    )
    app = make_app([_echo("chat"), _echo("archivist")], retention=retention)
    async with served(app) as http, running_worker(app):
        short = [
            await app.generate("chat", f"ACME-NOTE-{n}", memory={"thread": "t1", "resource": "acme"}) for n in range(3)
        ]
        kept = await app.generate("chat", "GLOBEX-NOTE-1", memory={"thread": "t1", "resource": "globex"})
        archived = await app.generate("archivist", "ARCHIVE-NOTE-1")

        async def records_deleted() -> bool:
            return [await app.store.read_chunks(run.run_id) for run in short] == [[], [], []]

        async def not_served(run_id: str) -> bool:
            return (await http.get(f"/runs/{run_id}")).status_code == 404

        await until(records_deleted, timeout=120)  # the expired runs' records are deleted
        for run in short:  # gone from Temporal too, which deletes in the background within moments
            await until(partial(not_served, run.run_id), timeout=90)
        assert (await app.thread("t1", resource_id="acme")).to_wire()["messages"] == []
        left = store_contents(app.store)
        assert not any(f"ACME-NOTE-{n}" in left for n in range(3))
        assert "GLOBEX-NOTE-1" in left and "ARCHIVE-NOTE-1" in left
        for run in (kept, archived):
            assert await app.store.read_chunks(run.run_id) != []
            assert (await http.get(f"/runs/{run.run_id}")).status_code == 200


async def test_a_sweep_notes_expiries_ahead_and_deletes_only_what_expired(make_app: AppFactory) -> None:
    app = make_app([_echo("chat")])
    now = [time.time()]
    sweeper = RetentionSweeper(
        app.client, app.store, app.task_queue, Retention(keep=timedelta(days=2)), clock=lambda: now[0]
    )
    async with running_worker(app):
        run = await app.generate("chat", "hello", memory={"thread": "t1", "resource": "acme"})

        async def noted() -> SweepResult | None:
            result = await sweeper.sweep()
            return result if result.noted else None

        first = await until(noted, timeout=60)  # the run closes, and visibility lists it, within moments
    assert first.noted == 1 and first.deleted == []
    assert await app.store.read_chunks(run.run_id) != []
    now[0] += timedelta(days=1).total_seconds()
    assert (await sweeper.sweep()).deleted == []  # a day later: still kept
    now[0] += timedelta(days=1, minutes=1).total_seconds()
    assert (await sweeper.sweep()).deleted == [run.run_id]  # two days after it closed: gone
    assert await app.store.read_chunks(run.run_id) == []
    assert (await sweeper.sweep()).deleted == []  # and only once


async def test_a_run_taken_out_of_its_threads_queue_expires_from_its_removal(make_app: AppFactory) -> None:
    """A queued run that is taken out never runs and never closes, so no sweep would note it; what the store keeps of
    it (where it was queued) expires from the removal under its agent's retention."""
    gate = Gate()
    retention = Retention(keep=timedelta(days=30), agents={"chat": timedelta(days=1)})
    app = make_app([gated_agent(gate)], retention=retention)
    memory = {"thread": "t-expiring", "resource": "acme"}
    now = [time.time()]
    sweeper = RetentionSweeper(app.client, app.store, app.task_queue, retention, clock=lambda: now[0])
    async with running_worker(app):
        first = await app.stream("chat", "one", memory=memory)
        queued = await app.stream("chat", "two", memory=memory, run_id="taken-out-to-expire")
        assert queued.thread_outcome is not None and queued.thread_outcome.outcome == "queued"
        assert await app.cancel_queued_run("t-expiring", queued.run_id, resource_id="acme")
        assert await app.store.saved_outcome(queued.run_id, QUEUED_ON_KEY) is not None
        assert queued.run_id not in (await sweeper.sweep()).deleted
        now[0] += timedelta(hours=23).total_seconds()
        assert queued.run_id not in (await sweeper.sweep()).deleted  # within the agent's day: kept
        now[0] += timedelta(hours=1, minutes=1).total_seconds()
        assert queued.run_id in (await sweeper.sweep()).deleted
        assert await app.store.saved_outcome(queued.run_id, QUEUED_ON_KEY) is None
        gate.open()
        assert await first.text == "one after 1"
