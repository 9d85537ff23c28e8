"""Deadlines on suspensions and approvals, on the offline time-skipping dev server (three simulated days)."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.journal.chunks import DataChunk, ToolOutputDeniedChunk
from tests.conftest import closed_history, running_worker


@asynccontextmanager
async def deadline_app(env: WorkflowEnvironment, tmp_path: Path, agent: Agent) -> AsyncIterator[App]:
    """An App of ``agent`` on the time-skipping server, its store closed after the block."""
    app = App(
        agents=[agent], store=f"sqlite:///{tmp_path / 's.db'}", task_queue=f"tq-{uuid.uuid4()}", client=env.client
    )
    try:
        yield app
    finally:
        await app.store.close()


async def test_suspension_deadline_reruns_the_tool_as_expired(
    skipping_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    seen: list[tuple[Any, bool]] = []

    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        seen.append((ctx.resume_data, ctx.expired))
        assert ctx.suspend is not None
        if ctx.expired:
            return "escalated to the on-call manager"
        return await ctx.suspend({"question": "refund?"}, expires_in=timedelta(days=3))

    tool = create_tool(id="refund", description="Refund with sign-off", execute=execute)
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("refund", {})]), ScriptedResponse(text="Escalated.")]
    )
    agent = Agent(id="deadline", model=model, tools={"refund": tool})
    started = time.monotonic()
    async with deadline_app(skipping_env, tmp_path, agent) as app, running_worker(app):
        stream = await app.agent("deadline").stream("refund order 7")
        first = await stream.result()
        chunks = [c async for c in app.attach(stream.run_id).full_stream]
        while chunks[-1].type != "finish" or chunks[-1].payload.step_result.reason == "suspended":  # type: ignore[union-attr]
            chunks += [c async for c in app.attach(stream.run_id, offset=(chunks[-1].offset or 0) + 1).full_stream]
        history = await closed_history(app.client, stream.run_id)
    elapsed = time.monotonic() - started

    assert first.finish_reason == "suspended"
    assert seen == [(None, False), (None, True)]
    expired = [c for c in chunks if isinstance(c, DataChunk) and c.type == "data-suspension-expired"]
    assert len(expired) == 1
    assert expired[0].model_dump(by_alias=True)["data"] == {"toolCallId": "call_0_0", "toolName": "refund"}
    results = [c for c in chunks if c.type == "tool-result"]
    assert [r.payload.result for r in results] == ["escalated to the on-call manager"]  # type: ignore[union-attr]
    assert chunks[-1].payload.step_result.reason == "stop"  # type: ignore[union-attr]
    timer = next(e for e in history.events if e.HasField("timer_started_event_attributes"))
    waited = timer.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
    assert timedelta(days=3) - timedelta(minutes=1) < waited <= timedelta(days=3)

    assert elapsed < 60


async def test_approval_deadline_declines_with_a_clear_result(
    skipping_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    executions: list[int] = []
    tool = create_tool(
        id="delete", description="Deletes", execute=lambda d: executions.append(1), require_approval=True
    )
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("delete", {})]), ScriptedResponse(text="Not deleted.")]
    )
    agent = Agent(id="approve-deadline", model=model, tools={"delete": tool}, suspend_expires_in=timedelta(days=2))
    async with deadline_app(skipping_env, tmp_path, agent) as app, running_worker(app):
        stream = await app.agent("approve-deadline").stream("delete it")
        first = await stream.result()
        handle = app.client.get_workflow_handle(stream.run_id)
        final = await handle.result()
        history = await handle.fetch_history()
        chunks = [c async for c in app.attach(stream.run_id).full_stream]
        offset = (chunks[-1].offset or 0) + 1
        chunks += [c async for c in app.attach(stream.run_id, offset=offset).full_stream]

    assert first.finish_reason == "suspended"
    timer = next(e for e in history.events if e.HasField("timer_started_event_attributes"))
    waited = timer.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
    assert timedelta(days=2) - timedelta(minutes=1) < waited <= timedelta(days=2)

    assert final["finishReason"] == "stop"
    assert executions == []
    denied = [c for c in chunks if isinstance(c, ToolOutputDeniedChunk)]
    assert len(denied) == 1
    assert denied[0].payload.approval.expired is True
    assert denied[0].payload.approval.reason == "Tool call was not approved before its deadline"
    results = [c for c in chunks if c.type == "tool-result"]
    assert [r.payload.result for r in results] == ["Tool call was not approved before its deadline"]  # type: ignore[union-attr]
