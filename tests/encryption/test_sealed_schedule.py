"""A schedule's action carries its run's prompt: sealed in Temporal like the run's input, and its runs are
ordinary runs of the encrypting App."""

from __future__ import annotations

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, running_worker
from tests.support.encryption import keyring, readable
from tests.support.scheduled_runs import view_with_recent_runs
from tests.support.temporal_cli import temporal_cli

SCHEDULED_PROMPT = "schedule-prompt-TAPIR-8812 overdue invoices"


async def test_a_schedules_action_is_sealed_and_its_runs_finish(make_app: AppFactory) -> None:
    agent = Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))
    app = make_app([agent], encryption_keys=keyring("k1"))
    async with running_worker(app):
        schedule = await app.schedule("reporter", SCHEDULED_PROMPT, every="1h", schedule_id=f"sealed-{app.task_queue}")
        try:
            code, described = await temporal_cli(
                app.client, "schedule", "describe", "--schedule-id", schedule.id, "--output", "json"
            )
            assert code == 0, described
            assert "binary/encrypted" in readable(described)
            assert "TAPIR" not in readable(described)

            await schedule.trigger()
            view = await view_with_recent_runs(schedule, 1)
            assert view.agent_id == "reporter"  # the schedule's memo, read through the App's codec
            handle = app.client.get_workflow_handle(view.recent_runs[0].run_id, result_type=RunResult)
            assert (await handle.result()).finish_reason == "stop"
            assert await app.attach(handle.id).text == "all quiet"
        finally:
            await schedule.delete()
