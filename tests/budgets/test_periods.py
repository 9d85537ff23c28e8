"""Day and month limits across a period boundary, on the offline time-skipping server: the period is the workflow's
time (handed to the model step), not the worker's clock."""

from __future__ import annotations

import uuid
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, Usage, create_tool
from tempo_agents.budgets import period_keys
from tempo_agents.workflows.activity_names import MODEL_STEP
from tests.conftest import running_worker

STEP = Usage(input_tokens=70, output_tokens=30, total_tokens=100)


async def wait_days(data: dict[str, Any], ctx: ToolContext) -> Any:
    """Waits for a person who never answers: its deadline (``days`` days) ends the wait."""
    assert ctx.suspend is not None
    if ctx.expired:
        return "nobody answered"
    return await ctx.suspend({"question": "go on?"}, expires_in=timedelta(days=data["days"]))


def agent(days: int) -> Agent:
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("wait", {"days": days})], usage=STEP),
            ScriptedResponse(text="Done.", usage=STEP),
        ]
    )
    tool = create_tool(id="wait", description="Waits for a person", execute=wait_days)
    return Agent(id="patient", model=model, tools={"wait": tool})


async def run_to_end(app: App, limit: dict[str, Any], resource: str) -> tuple[str, list[str]]:
    """Runs the agent with ``limit`` on ``resource``: its run id and the finish reason of each segment."""
    memory = {"thread": str(uuid.uuid4()), "resource": resource}
    stream = await app.agent("patient").stream("go", memory=memory, budget={"resource": limit})
    await stream.result()
    await app.client.get_workflow_handle(stream.run_id).result()
    chunks = [entry.chunk for entry in await app.store.read_chunks(stream.run_id, 0, 10_000)]
    return stream.run_id, [c["payload"]["stepResult"]["reason"] for c in chunks if c["type"] == "finish"]


async def test_a_day_limit_counts_each_utc_day_of_the_workflows_time(
    skipping_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    app = App(
        agents=[agent(days=1)],
        store=f"sqlite:///{tmp_path / 's.db'}",
        task_queue=f"tq-{uuid.uuid4()}",
        client=skipping_env.client,
    )
    async with running_worker(app):
        # 100 tokens, then a day's wait: the second step is in the next UTC day of the workflow's clock (the
        # worker's clock has not moved a day), whose count starts at 0.
        run_id, crossed = await run_to_end(app, {"day": {"tokens": 100}}, "acme")
        history = await app.client.get_workflow_handle(run_id).fetch_history()
        # The same run with a limit over all time stops at its second step: the period made the difference.
        _, stopped = await run_to_end(app, {"total": {"tokens": 100}}, "other")

    assert crossed == ["suspended", "stop"]
    assert stopped == ["suspended", "budget-exceeded"]
    steps = [
        e.event_time.ToDatetime(UTC)
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
        and e.activity_task_scheduled_event_attributes.activity_type.name == MODEL_STEP
    ]
    assert len(steps) == 2 and steps[1] - steps[0] >= timedelta(days=1)
    first, second = (period_keys(t) for t in steps)
    keys = [("resource:acme", first["day"]), ("resource:acme", second["day"]), ("resource:acme", "total")]
    keys += [("resource:acme", first["month"]), ("resource:acme", second["month"])]
    counted = await app.store.usage_counters(keys)
    assert counted[("resource:acme", first["day"])] == (100, 0)
    assert counted[("resource:acme", second["day"])] == (100, 0)
    assert counted[("resource:acme", "total")] == (200, 0)
    if first["month"] == second["month"]:
        assert counted[("resource:acme", first["month"])] == (200, 0)
    else:  # the skipped day crossed into the next month
        assert counted[("resource:acme", first["month"])] == counted[("resource:acme", second["month"])] == (100, 0)
    await app.store.close()
