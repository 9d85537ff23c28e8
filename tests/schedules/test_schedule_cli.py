"""``tempo-agents schedule create|list|trigger|pause|unpause|delete`` as subprocesses against the session's dev
server, with a worker of the same App in the test."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tests.conftest import running_worker
from tests.support.cli_processes import cli_output, run_cli
from tests.support.scheduled_runs import QUIET_EVERY, QUIET_EVERY_SECONDS, view_with_recent_runs

APP_MODULE = """
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse

app = App(agents=[Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))])
"""


@pytest.mark.timeout(600)  # eight CLI processes, each importing the package: over 120 s beside stress-ng --cpu 8
async def test_the_schedule_command(temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    (tmp_path / "reportapp.py").write_text(APP_MODULE)
    task_queue = f"tq-{uuid.uuid4()}"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    common = [
        "--address", temporal_env.client.service_client.config.target_host, "--task-queue", task_queue,
        "--app", "reportapp:app", "--store", store,
    ]  # fmt: skip
    schedule_id = f"report-{task_queue}"
    app = App(
        agents=[Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))],
        store=store,
        task_queue=task_queue,
        client=temporal_env.client,
    )
    try:
        async with running_worker(app):
            created = await cli_output(
                "schedule", "create", "reporter", "Anything new?", "--every", QUIET_EVERY, "--id", schedule_id, *common,
                cwd=tmp_path,
            )  # fmt: skip
            assert created.splitlines()[0] == f"schedule {schedule_id} created"
            listed = await cli_output("schedule", "list", *common, cwd=tmp_path)
            assert listed.startswith(f"{schedule_id}  agent=reporter  every {QUIET_EVERY_SECONDS:g}s  active  runs=0")

            assert (await cli_output("schedule", "trigger", schedule_id, *common, cwd=tmp_path)).strip() == (
                f"schedule {schedule_id} triggered (overlap skip: its policy decides)"
            )
            schedule = app.get_schedule(schedule_id)
            run_id = (await view_with_recent_runs(schedule, 1)).recent_runs[0].run_id
            assert await app.attach(run_id).text == "all quiet"

            await cli_output("schedule", "pause", schedule_id, "--note", "holidays", *common, cwd=tmp_path)
            view = await schedule.describe()
            assert (view.paused, view.note) == (True, "holidays")
            listed = await cli_output("schedule", "list", *common, cwd=tmp_path)
            assert "  paused  runs=1  next=-  last=" + run_id in listed
            await cli_output("schedule", "unpause", schedule_id, *common, cwd=tmp_path)
            assert not (await schedule.describe()).paused

            await cli_output("schedule", "delete", schedule_id, *common, cwd=tmp_path)
            assert (await cli_output("schedule", "list", *common, cwd=tmp_path)).strip() == "no schedules"
            missing = await asyncio.to_thread(run_cli, ["schedule", "trigger", schedule_id, *common], tmp_path)
            assert missing.returncode == 1
            assert missing.stderr.strip() == f'tempo-agents: error: no schedule "{schedule_id}" exists'
    finally:
        await app.store.close()
