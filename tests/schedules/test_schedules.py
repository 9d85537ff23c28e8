"""Runs started by a Temporal Schedule, on the session's dev server: each an ordinary run that finishes, visible as
scheduled; pause is honoured; a week of an hourly schedule is 168 runs, none doubled."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.client.app import App
from tempo_agents.errors import ConfigurationError
from tempo_agents.worker.dev_server import DevServer
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served
from tests.support.scheduled_runs import QUIET_EVERY, QUIET_EVERY_SECONDS, view_with_recent_runs


def reporter() -> Agent:
    return Agent(id="reporter", name="Reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))


async def started_runs(client: Client, schedule_id: str, *, closed: bool = False) -> list[str]:
    """The run ids of the schedule's runs, from visibility (``TemporalScheduledById``)."""
    query = f"TemporalScheduledById = '{schedule_id}'"
    if closed:
        query += " AND ExecutionStatus != 'Running'"
    return [execution.id async for execution in client.list_workflows(query)]


async def until_runs(client: Client, schedule_id: str, count: int, *, closed: bool = False) -> list[str]:
    while len(runs := await started_runs(client, schedule_id, closed=closed)) < count:
        await asyncio.sleep(0.2)
    return runs


async def test_a_triggered_run_is_an_ordinary_run_that_finishes(make_app: AppFactory, client: Client) -> None:
    app = make_app([reporter()])
    async with running_worker(app):
        schedule = await app.schedule(
            "reporter",
            "Anything new?",
            every=QUIET_EVERY,
            schedule_id=f"report-{app.task_queue}",
            memory={"thread": "ops", "resource": "team-a"},
        )
        try:
            await schedule.trigger()
            view = await view_with_recent_runs(schedule, 1)
            run_id = view.recent_runs[0].run_id
            assert run_id.startswith(f"{schedule.id}-")
            handle = client.get_workflow_handle(run_id, result_type=RunResult)
            result = await handle.result()
            assert result.finish_reason == "stop"
            assert result.run_id == run_id

            text = await app.attach(run_id).text
            assert text == "all quiet"
            chunks = await app.store.read_chunks(run_id, 0)
            assert [entry.chunk["type"] for entry in chunks if entry.chunk["type"] in ("start", "finish")] == [
                "start",
                "finish",
            ]

            description = await handle.describe()
            attributes = description.typed_search_attributes
            assert attributes.get(search_attributes.AGENT_ID) == "reporter"
            assert attributes.get(search_attributes.THREAD_ID) == "ops"
            assert attributes.get(search_attributes.RESOURCE_ID) == "team-a"
            assert (await description.memo())["schedule"] == schedule.id
            assert await started_runs(client, schedule.id) == [run_id]

            memory = await app.store.get_thread_messages("ops", "team-a")
            assert [message["role"] for message in memory][-2:] == ["user", "assistant"]

            view = await schedule.describe()
            assert view.agent_id == "reporter"
            assert view.every_seconds == [QUIET_EVERY_SECONDS]
            assert len(view.next_runs) > 0 and view.next_runs[0] > datetime.now(UTC)
            assert [s.id for s in await app.list_schedules()] == [schedule.id]
        finally:
            await schedule.delete()


async def test_runs_every_few_seconds_and_pause_is_honoured(make_app: AppFactory, client: Client) -> None:
    app = make_app([reporter()])
    async with running_worker(app):
        schedule = await app.schedule("reporter", "Anything new?", every="1s", schedule_id=f"tick-{app.task_queue}")
        try:
            await until_runs(client, schedule.id, 2, closed=True)
            await schedule.pause("maintenance")
            view = await schedule.describe()
            assert view.paused and view.note == "maintenance"
            started = view.runs_started
            await asyncio.sleep(3)  # three intervals: a schedule that ignored the pause would have started runs
            view = await schedule.describe()
            assert view.runs_started == started
            runs = await until_runs(client, schedule.id, started, closed=True)
            assert len(runs) == started == len(set(runs))

            await schedule.unpause()
            await until_runs(client, schedule.id, started + 1, closed=True)
            for run_id in await started_runs(client, schedule.id, closed=True):
                result = await client.get_workflow_handle(run_id, result_type=RunResult).result()
                assert result.finish_reason == "stop"
        finally:
            await schedule.delete()


@pytest.mark.timeout(600)
async def test_a_week_of_an_hourly_schedule_is_168_runs(make_app: AppFactory, client: Client) -> None:
    app = make_app([reporter()])
    async with running_worker(app):
        # Paused: a backfill starts its runs all the same, and the hour's own run cannot join them (a test running
        # across a full hour counted it, 169 runs).
        schedule = await app.schedule(
            "reporter",
            "Hourly report",
            cron="0 * * * *",
            overlap="allow_all",
            schedule_id=f"hourly-{app.task_queue}",
            paused=True,
        )
        try:
            week_start = datetime(2026, 11, 2, tzinfo=UTC)
            week_end = week_start + timedelta(days=7) - timedelta(seconds=1)  # a backfill's end is inclusive
            await schedule.backfill(week_start, week_end, overlap="allow_all")
            runs = await until_runs(client, schedule.id, 168, closed=True)
            expected = {
                f"{schedule.id}-{(week_start + timedelta(hours=hour)).strftime('%Y-%m-%dT%H:%M:%SZ')}"
                for hour in range(168)
            }
            assert sorted(runs) == sorted(expected)  # one run per hour of the week, none twice
            assert (await schedule.describe()).runs_started == 168
            async for execution in client.list_workflows(f"TemporalScheduledById = '{schedule.id}'"):
                assert execution.status == WorkflowExecutionStatus.COMPLETED
            for run_id in list(expected)[:5]:
                chunks = await app.store.read_chunks(run_id, 0)
                assert [entry.chunk["type"] for entry in chunks].count("finish") == 1
        finally:
            await schedule.delete()


async def test_a_schedule_needs_one_spec_and_no_run_id(make_app: AppFactory) -> None:
    app: App = make_app([reporter()])
    with pytest.raises(ConfigurationError, match="exactly one of cron"):
        await app.schedule("reporter", "hi")
    with pytest.raises(ConfigurationError, match="exactly one of cron"):
        await app.schedule("reporter", "hi", cron="* * * * *", every="1m")
    with pytest.raises(ConfigurationError, match="cannot share one run_id"):
        await app.schedule("reporter", "hi", every="1m", run_id="fixed")
    with pytest.raises(ConfigurationError, match="is not a duration"):
        await app.schedule("reporter", "hi", every="soon")
    with pytest.raises(ConfigurationError, match="unknown overlap policy"):
        await app.schedule("reporter", "hi", every="1m", overlap="sometimes")
    with pytest.raises(ConfigurationError, match="max_steps is a whole number, got True"):
        await app.schedule("reporter", "hi", every="1m", max_steps=True)
    with pytest.raises(ConfigurationError, match="at most once a second"):
        await app.schedule("reporter", "hi", every="500ms")
    with pytest.raises(ConfigurationError, match="cannot take thread_strategy"):
        await app.schedule("reporter", "hi", every="1m", thread_strategy="reject")


async def test_a_schedule_survives_a_restart_of_the_temporal_server(tmp_path: Path) -> None:
    db = tmp_path / "temporal.db"
    app = App(agents=[reporter()], store=f"sqlite:///{tmp_path / 'store.db'}", task_queue=f"tq-{uuid.uuid4()}")
    try:
        async with DevServer(db_filename=db) as server:
            await app.connect(server.address)
            await app.schedule("reporter", "Anything new?", every="1h", schedule_id="survivor", paused=True)
        async with DevServer(db_filename=db) as server:
            await app.connect(server.address)
            views = await app.list_schedules()
            assert [(view.id, view.paused, view.agent_id) for view in views] == [("survivor", True, "reporter")]
            async with running_worker(app):
                schedule = app.get_schedule("survivor")
                await schedule.trigger()
                view = await view_with_recent_runs(schedule, 1)
                assert await app.attach(view.recent_runs[0].run_id).text == "all quiet"
    finally:
        await app.store.close()


async def test_after_a_restart_a_schedule_lists_its_next_and_recent_runs(tmp_path: Path) -> None:
    """The schedule, its run before the restart and when it runs next are all there afterwards (from Python and
    over HTTP, as the dashboard reads them); a run triggered after the restart joins the earlier one, none doubled."""
    db = tmp_path / "temporal.db"
    app = App(agents=[reporter()], store=f"sqlite:///{tmp_path / 'store.db'}", task_queue=f"tq-{uuid.uuid4()}")
    try:
        async with DevServer(db_filename=db) as server:
            await app.connect(server.address)
            async with running_worker(app):
                schedule = await app.schedule("reporter", "Anything new?", every=QUIET_EVERY, schedule_id="weekly")
                await schedule.trigger()
                before = await view_with_recent_runs(schedule, 1)
                first_run = before.recent_runs[0].run_id
                assert await app.attach(first_run).text == "all quiet"
                await app.client.get_workflow_handle(first_run).result()
            assert before.next_runs
        async with DevServer(db_filename=db) as server:
            await app.connect(server.address)
            [view] = await app.list_schedules()
            now = datetime.now(UTC)
            assert (view.id, view.agent_id, view.every_seconds, view.paused) == (
                "weekly",
                "reporter",
                [QUIET_EVERY_SECONDS],
                False,
            )
            assert [run.run_id for run in view.recent_runs] == [first_run]
            week = timedelta(seconds=QUIET_EVERY_SECONDS)
            assert view.next_runs and all(now < due <= now + 10 * week for due in view.next_runs)
            assert view.next_runs[0] - now <= week  # every week: the next within the week
            assert [b - a for a, b in zip(view.next_runs, view.next_runs[1:], strict=False)] == [week] * (
                len(view.next_runs) - 1
            )
            async with served(app) as http:
                listed = (await http.get("/schedules")).json()
                assert [(s["id"], [r["runId"] for r in s["recentRuns"]], len(s["nextRuns"])) for s in listed] == [
                    ("weekly", [first_run], len(view.next_runs))
                ]
            async with running_worker(app):
                schedule = app.get_schedule("weekly")
                await schedule.trigger()
                after = await view_with_recent_runs(schedule, 2)
                assert after.recent_runs[0].run_id == first_run
                second_run = after.recent_runs[1].run_id
                assert second_run != first_run
                assert await app.attach(second_run).text == "all quiet"
                assert sorted(await started_runs(app.client, "weekly")) == sorted([first_run, second_run])
                await schedule.delete()
    finally:
        await app.store.close()


async def test_a_schedule_is_listed_as_soon_as_it_is_created(make_app: AppFactory) -> None:
    """Temporal lists schedules from its visibility store, a moment after each is created; twelve created at once are
    each listed by the time their creation returns, so a list (or an erasure of their resource) that follows finds
    them."""
    app = make_app([reporter()])
    created = await asyncio.gather(
        *(app.schedule("reporter", "Anything new?", every="1h", paused=True) for _ in range(12))
    )
    try:
        listed = [view.id for view in await app.list_schedules()]
        assert sorted(listed) == sorted(schedule.id for schedule in created)
    finally:
        await asyncio.gather(*(schedule.delete() for schedule in created))


async def test_a_server_that_cannot_filter_schedules_by_id_still_lists_a_new_one(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Creating a schedule asks Temporal for it by id (``ScheduleId = '...'``); a server that refuses that filter (as
    one may that predates it) is looked through whole instead, and the creation still returns a listed schedule."""
    app = make_app([reporter()])
    listing = app.client.list_schedules
    refused: list[str] = []

    async def without_id_filter(query: str | None = None, **options: Any) -> Any:
        if query is not None:
            refused.append(query)
            raise RPCError("invalid query filter for schedules", RPCStatusCode.INVALID_ARGUMENT, b"")
        return await listing(query, **options)

    monkeypatch.setattr(app.client, "list_schedules", without_id_filter)
    schedule = await app.schedule("reporter", "Anything new?", every="1h", paused=True)
    try:
        assert refused == [f"ScheduleId = '{schedule.id}'"]
        assert [view.id for view in await app.list_schedules()] == [schedule.id]
    finally:
        await schedule.delete()
