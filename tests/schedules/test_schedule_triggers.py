"""Triggers of an ``allow_all`` schedule sent at once (every sender ready before any sends, so they land in one
second): each is a run of its own, named in its answer, from Python, over HTTP from two clients and from two
``tempo-agents schedule trigger`` processes. Temporal names a run it starts by the second, so before triggers were
started here two of one second were one run."""

from __future__ import annotations

import asyncio
import re
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.schedules.handles import AgentSchedule, trigger_run_id
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served
from tests.support.scheduled_runs import QUIET_EVERY, closed_scheduled_runs

APP_MODULE = """
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse

app = App(agents=[Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))])
"""

TRIGGER_ID = re.compile(r"-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ-[0-9a-f]{8}$")


def reporter() -> Agent:
    return Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))


async def finished(client: Client, run_ids: list[str]) -> None:
    for run_id in run_ids:
        result = await client.get_workflow_handle(run_id, result_type=RunResult).result()
        assert (result.run_id, result.finish_reason) == (run_id, "stop")
        description = await client.get_workflow_handle(run_id).describe()
        assert description.status == WorkflowExecutionStatus.COMPLETED


def test_a_trigger_run_id_is_unique_and_never_a_scheduled_runs_name() -> None:
    at = datetime(2026, 12, 2, 8, 0, 0, 400_000, tzinfo=UTC)
    first, second = trigger_run_id("daily", at), trigger_run_id("daily", at)
    assert first != second
    assert first.startswith("daily-2026-12-02T08:00:00Z-") and TRIGGER_ID.search(first)
    assert first != "daily-2026-12-02T08:00:00Z"  # the name Temporal gives the run due then


async def test_python_triggers_in_one_second_are_runs_of_their_own(make_app: AppFactory, client: Client) -> None:
    app = make_app([reporter()])
    async with running_worker(app):
        schedule = await app.schedule(
            "reporter", "Anything new?", every=QUIET_EVERY, overlap="allow_all", schedule_id=f"burst-{app.task_queue}"
        )
        try:
            barrier = asyncio.Barrier(5)

            async def trigger() -> str | None:
                handle = app.get_schedule(schedule.id)
                await barrier.wait()
                return (await handle.trigger()).run_id

            run_ids = await asyncio.gather(*(trigger() for _ in range(5)))
            assert all(run_id is not None and TRIGGER_ID.search(run_id) for run_id in run_ids)
            started = [run_id for run_id in run_ids if run_id is not None]
            assert len(set(started)) == 5
            assert sorted(await closed_scheduled_runs(client, schedule.id, 5)) == sorted(started)
            await finished(client, started)
            for run_id in started:
                assert await app.attach(run_id).text == "all quiet"
            view = await schedule.describe()
            assert sorted(run.run_id for run in view.recent_runs) == sorted(started)
            assert view.runs_started == 5
        finally:
            await schedule.delete()


async def test_two_http_clients_trigger_in_one_second(make_app: AppFactory, client: Client) -> None:
    app = make_app([reporter()])
    schedule_id = f"http-burst-{app.task_queue}"
    async with running_worker(app), served(app) as http:
        created = await http.post(
            "/schedules",
            json={"agentId": "reporter", "message": "Anything new?", "every": QUIET_EVERY, "overlap": "allow_all",
                  "scheduleId": schedule_id},
        )  # fmt: skip
        assert created.status_code == 201, created.text
        async with httpx.AsyncClient(base_url=http.base_url, timeout=60) as other:
            answers: list[httpx.Response] = []
            for _ in range(3):  # three rounds: each pair sent together, both clients ready before either sends
                barrier = asyncio.Barrier(2)

                async def send(sender: httpx.AsyncClient, barrier: asyncio.Barrier = barrier) -> httpx.Response:
                    await barrier.wait()
                    return await sender.post(f"/schedules/{schedule_id}/trigger")

                answers += await asyncio.gather(send(http), send(other))
        bodies = [answer.json() for answer in answers]
        assert [answer.status_code for answer in answers] == [202] * 6
        assert all(
            (body["triggered"], body["started"], body["overlap"]) == (True, True, "allow_all") for body in bodies
        )
        run_ids = [body["runId"] for body in bodies]
        assert len(set(run_ids)) == 6 and all(TRIGGER_ID.search(run_id) for run_id in run_ids)
        assert sorted(await closed_scheduled_runs(client, schedule_id, 6)) == sorted(run_ids)
        await finished(client, run_ids)
        for run_id in run_ids:
            run = (await http.get(f"/runs/{run_id}")).json()
            assert (run["status"], run["scheduleId"]) == ("completed", schedule_id)
        view = (await http.get(f"/schedules/{schedule_id}")).json()
        assert sorted(run["runId"] for run in view["recentRuns"]) == sorted(run_ids)
        assert view["runsStarted"] == 6
        assert (await http.delete(f"/schedules/{schedule_id}")).status_code == 204


async def test_two_cli_processes_trigger_at_once(temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    """Each process loads the App and connects, then waits for the other at a file barrier before it triggers."""
    (tmp_path / "reportapp.py").write_text(APP_MODULE)
    task_queue = f"tq-{uuid.uuid4()}"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    schedule_id = f"cli-burst-{task_queue}"
    app = App(agents=[reporter()], store=store, task_queue=task_queue, client=temporal_env.client)
    go = tmp_path / "go"
    # The command's own code, with its connect wrapped: once connected, a process says so and waits for the go file.
    launcher = (
        "import pathlib, sys, time\n"
        "import tempo_agents.cli.schedule as command\n"
        "from tempo_agents.cli.main import main\n"
        "connect = command.connect\n"
        "async def connected(*args, **kwargs):\n"
        "    await connect(*args, **kwargs)\n"
        "    print('ready', flush=True)\n"
        f"    while not pathlib.Path({str(go)!r}).exists():\n"
        "        time.sleep(0.001)\n"
        "command.connect = connected\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    common = [
        "--address", temporal_env.client.service_client.config.target_host, "--task-queue", task_queue,
        "--app", "reportapp:app", "--store", store,
    ]  # fmt: skip
    try:
        async with running_worker(app):
            await app.schedule(
                "reporter", "Anything new?", every=QUIET_EVERY, overlap="allow_all", schedule_id=schedule_id
            )
            processes = [
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-c",
                    launcher,
                    "schedule",
                    "trigger",
                    schedule_id,
                    *common,
                    cwd=tmp_path,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                for _ in range(2)
            ]
            for process in processes:
                assert process.stdout is not None
                assert (await asyncio.wait_for(process.stdout.readline(), 120)).decode().strip() == "ready"
            go.touch()
            outputs = [await asyncio.wait_for(process.communicate(), 120) for process in processes]
            assert [process.returncode for process in processes] == [0, 0], [err.decode() for _, err in outputs]
            lines = [out.decode().strip() for out, _ in outputs]
            found = [
                re.fullmatch(rf"schedule {re.escape(schedule_id)} triggered: run (\S+) started", line) for line in lines
            ]
            assert all(found), lines
            run_ids = [match.group(1) for match in found if match]
            assert len(set(run_ids)) == 2
            assert sorted(await closed_scheduled_runs(app.client, schedule_id, 2)) == sorted(run_ids)
            await finished(app.client, run_ids)
            await AgentSchedule(app, app.client.get_schedule_handle(schedule_id)).delete()
    finally:
        await app.store.close()
