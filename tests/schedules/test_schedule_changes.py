"""Changing a schedule in place from Python and from ``tempo-agents schedule update`` (a subprocess): spec, policy,
note, message and run options change, the schedule keeps its id, recent runs and count; run options and backfill
from the command line; what is wrong is refused before anything changes."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import TextPart
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker
from tests.support.cli_processes import cli, cli_output, run_cli
from tests.support.scheduled_runs import QUIET_EVERY, closed_scheduled_runs

APP_MODULE = """
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse

app = App(agents=[Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))])
"""


def heard(request: ModelRequest) -> ScriptedResponse:
    said = [part.text for part in request.messages[-1].content if isinstance(part, TextPart)]
    return ScriptedResponse(text="heard: " + " ".join(said))


async def test_python_update_keeps_the_schedule_and_its_runs(make_app: AppFactory, client: Client) -> None:
    app: App = make_app([Agent(id="reporter", model=ScriptedModel(heard))])
    async with running_worker(app):
        schedule = await app.schedule(
            "reporter", "Anything new?", every=QUIET_EVERY, schedule_id=f"py-{app.task_queue}"
        )
        try:
            await schedule.trigger()
            [first] = await closed_scheduled_runs(client, schedule.id, 1)

            view = await app.update_schedule(
                schedule.id,
                cron="0 9 * * 1-5",
                time_zone="Europe/Paris",
                jitter="2m",
                overlap="allow_all",
                catchup_window="1h",
                note="weekdays",
                message="What changed?",
                memory={"thread": "ops", "resource": "team-a"},
                max_steps=4,
            )
            assert (view.cron, view.every_seconds, view.time_zone, view.jitter_seconds) == (
                ["0 9 * * 1-5"],
                [],
                "Europe/Paris",
                120.0,
            )
            assert (view.overlap, view.catchup_window_seconds, view.note, view.message) == (
                "allow_all",
                3600.0,
                "weekdays",
                "What changed?",
            )
            assert view.options["memory"] == {"thread": "ops", "resource": "team-a"} and view.options["maxSteps"] == 4
            assert [run.run_id for run in view.recent_runs] == [first] and view.runs_started == 1

            triggered = await schedule.trigger()
            assert triggered.started and triggered.run_id is not None
            assert await app.attach(triggered.run_id).text == "heard: What changed?"
            memory = await app.store.get_thread_messages("ops", "team-a")
            assert [message["role"] for message in memory][-2:] == ["user", "assistant"]

            await closed_scheduled_runs(client, schedule.id, 2)
            before = await schedule.describe()
            for bad, message in (
                ({"every": "1h", "cron": "0 * * * *"}, "exactly one of cron"),
                ({"every": "250ms"}, "at most once a second"),
                ({"overlap": "sometimes"}, "unknown overlap policy"),
                ({"run_id": "fixed"}, "cannot take run_id"),
                ({"colour": "blue"}, "unknown run option"),
                ({"max_steps": 0}, "max_steps"),
                ({"max_steps": True}, "max_steps is a whole number, got True"),
                ({"max_steps": 2.5}, "max_steps is a whole number, got 2.5"),
                ({"remind_every_seconds": True}, "remind_every_seconds is a number of seconds, got True"),
                ({"message": ""}, "need a message"),
            ):
                with pytest.raises((ConfigurationError, ValueError), match=message):
                    await schedule.update(**bad)
            after = await schedule.describe()
            assert after.model_dump(exclude={"next_runs"}) == before.model_dump(exclude={"next_runs"})
        finally:
            await schedule.delete()


@pytest.mark.timeout(600)  # nine CLI processes, each importing the package: over 120 s at a load average of 20
async def test_the_schedule_command_sets_run_options_updates_and_backfills(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    (tmp_path / "reportapp.py").write_text(APP_MODULE)
    task_queue = f"tq-{uuid.uuid4()}"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    common = [
        "--address", temporal_env.client.service_client.config.target_host, "--task-queue", task_queue,
        "--app", "reportapp:app", "--store", store,
    ]  # fmt: skip
    schedule_id = f"cli-{task_queue}"
    app = App(
        agents=[Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))],
        store=store,
        task_queue=task_queue,
        client=temporal_env.client,
    )

    try:
        async with running_worker(app):
            created = await cli_output(
                "schedule", "create", "reporter", "Anything new?", "--every", QUIET_EVERY, "--id", schedule_id,
                "--overlap", "allow_all", "--thread", "ops", "--resource", "team-a", "--max-steps", "6",
                "--budget", '{"run": {"tokens": 20000}}', "--request-context", '{"tenant": "acme"}',
                "--instructions", "Be brief.", "--escalate-to", "alice", "--escalate-after", "3600", *common,
                cwd=tmp_path,
            )  # fmt: skip
            assert created.splitlines()[0] == f"schedule {schedule_id} created"
            view = json.loads(await cli_output("schedule", "describe", schedule_id, *common, cwd=tmp_path))
            assert (view["options"]["maxSteps"], view["options"]["budget"]["run"]["tokens"]) == (6, 20000)
            assert view["options"]["memory"] == {"thread": "ops", "resource": "team-a"}
            assert (view["options"]["requestContext"], view["options"]["extraInstructions"]) == (
                {"tenant": "acme"},
                "Be brief.",
            )
            assert (view["options"]["escalateTo"], view["options"]["escalateAfterSeconds"]) == (["alice"], 3600.0)

            triggered = (await cli_output("schedule", "trigger", schedule_id, *common, cwd=tmp_path)).strip()
            assert triggered.startswith(f"schedule {schedule_id} triggered: run {schedule_id}-")
            [first] = await closed_scheduled_runs(app.client, schedule_id, 1)

            updated = await cli_output(
                "schedule", "update", schedule_id, "--cron", "15 7 * * *", "--note", "mornings",
                "--message", "Overnight?", "--max-steps", "3", "--instructions", "-", *common,
                cwd=tmp_path,
            )  # fmt: skip
            assert updated.splitlines()[0] == f"schedule {schedule_id} updated"
            assert updated.splitlines()[1].startswith(f"{schedule_id}  agent=reporter  15 7 * * *  active  runs=1")
            view = json.loads(await cli_output("schedule", "describe", schedule_id, *common, cwd=tmp_path))
            assert (view["cron"], view["note"], view["message"]) == (["15 7 * * *"], "mornings", "Overnight?")
            assert view["options"]["maxSteps"] == 3 and "extraInstructions" not in view["options"]
            assert view["options"]["budget"]["run"]["tokens"] == 20000  # not named: unchanged
            assert [run["runId"] for run in view["recentRuns"]] == [first]

            start = datetime(2026, 11, 2, 7, 15, tzinfo=UTC)
            filled = await cli_output(
                "schedule", "backfill", schedule_id, "--start", start.isoformat(),
                "--end", (start + timedelta(days=1)).isoformat(), *common,
                cwd=tmp_path,
            )  # fmt: skip
            assert filled.strip().startswith(f"schedule {schedule_id} backfilled from 2026-11-02T07:15:00+00:00")
            runs = await closed_scheduled_runs(app.client, schedule_id, 3)
            assert sorted(runs)[:2] == [f"{schedule_id}-2026-11-02T07:15:00Z", f"{schedule_id}-2026-11-03T07:15:00Z"]

            code, _, stderr = await cli(
                "schedule", "backfill", schedule_id, "--start", start.isoformat(), "--end", start.isoformat(),
                *common, cwd=tmp_path,
            )  # fmt: skip
            assert code == 2 and "already has runs due in that period" in stderr
            await cli_output("schedule", "delete", schedule_id, *common, cwd=tmp_path)
    finally:
        await app.store.close()


async def test_the_schedule_command_refuses_bad_changes_before_anything_changes(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    (tmp_path / "reportapp.py").write_text(APP_MODULE)
    task_queue = f"tq-{uuid.uuid4()}"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    common = [
        "--address", temporal_env.client.service_client.config.target_host, "--task-queue", task_queue,
        "--app", "reportapp:app", "--store", store,
    ]  # fmt: skip
    app = App(
        agents=[Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))],
        store=store,
        task_queue=task_queue,
        client=temporal_env.client,
    )
    schedule = await app.schedule("reporter", "Anything new?", every=QUIET_EVERY, schedule_id=f"cli-{task_queue}")

    async def refused(*args: str) -> str:
        result = await asyncio.to_thread(run_cli, [*args, *common], tmp_path)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        return result.stderr.strip().splitlines()[-1]

    try:
        before = await schedule.describe()
        # Independent refusals, so the five processes start together (each one imports the package).
        said = list(
            await asyncio.gather(
                refused("schedule", "update", schedule.id, "--max-steps", "1.5"),
                refused("schedule", "update", schedule.id),
                refused("schedule", "update", schedule.id, "--every", "100ms"),
                refused("schedule", "update", schedule.id, "--thread", "t"),
                refused("schedule", "create", "reporter", "x", "--every", "1h", "--budget", '{"runs": 1}'),
            )
        )
        assert said == [
            "tempo-agents schedule update: error: argument --max-steps: not a whole number: 1.5",
            "tempo-agents: error: nothing to change: give at least one option",
            'tempo-agents: error: a schedule runs at most once a second: every="100ms" is shorter',
            "tempo-agents: error: thread and resource go together: pass both or neither",
            "tempo-agents: error: runs: Extra inputs are not permitted",
        ]
        after = await schedule.describe()
        assert after.model_dump(exclude={"next_runs"}) == before.model_dump(exclude={"next_runs"})
    finally:
        await schedule.delete()
        await app.store.close()
