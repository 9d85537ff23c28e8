"""A call whose tool refused an answer waits again and, answered again, runs with its tool's activity options.

An ``approve`` sent as a signal to a call that waits for data is accepted by the workflow (it becomes the resume data
``{"approved": true}``) and refused by the tool's resume schema in the activity: the call goes back to waiting
(``resume-rejected``). Its next answer must run with the options the tool declared (its timeouts, its attempts,
``local``), as its first resume did, which the history shows.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio.api.enums.v1 import EventType

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.workflows.payloads import ResumeRequest
from tempo_agents.workflows.run_patches import REFUSED_RESUMES_RUN_ANEW
from tests.conftest import AppFactory, closed_history, running_worker

TOOL_CALL = "tempo_agents.tool_call"


class Confirm(BaseModel):
    confirmed: bool


def confirm_tool(options: ActivityOptions) -> Any:
    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            return await ctx.suspend({"amount": data["amount"]})
        return {"charged": data["amount"] if ctx.resume_data["confirmed"] else 0}

    return create_tool(
        id="confirm", description="Charges once confirmed", resume_schema=Confirm, execute=execute, activity=options
    )


async def _refused_then_answered(
    make_app: AppFactory, agent_id: str, options: ActivityOptions, *, refusals: int = 1
) -> Any:
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("confirm", {"amount": 12}, id="c-1")]),
            ScriptedResponse(text="Charged."),
        ]
    )
    app = make_app([Agent(id=agent_id, model=model, tools={"confirm": confirm_tool(options)})])
    async with running_worker(app):
        first = await app.agent(agent_id).generate("charge 12")
        assert first.finish_reason == "suspended"
        handle = app.client.get_workflow_handle(first.run_id)
        for refused in range(1, refusals + 1):
            await handle.signal("resume", ResumeRequest(action="approve"))
            for _ in range(500):  # the refused resume is journaled, and the call waits again
                kinds = [
                    e.chunk.get("data", {}).get("kind")
                    for e in await app.store.read_chunks(first.run_id)
                    if e.chunk["type"] == "data-error"
                ]
                waiting = [p.tool_call_id for p in await app.pending(first.run_id)]
                if kinds.count("resume-rejected") == refused and waiting == ["c-1"]:
                    break
                await asyncio.sleep(0.02)
            else:
                raise AssertionError(f"refusal {refused} was never journaled")
        done = await app.agent(agent_id).resume_generate({"confirmed": True}, run_id=first.run_id)
        assert done.finish_reason == "stop"
        assert [r.payload.result for r in done.tool_results] == [{"charged": 12}]
        return await closed_history(app.client, first.run_id)


async def test_an_answer_after_a_refused_one_runs_with_the_tools_timeouts_and_attempts(
    make_app: AppFactory,
) -> None:
    options = ActivityOptions(
        start_to_close_timeout=timedelta(seconds=77),
        heartbeat_timeout=timedelta(seconds=13),
        maximum_attempts=4,
    )
    history = await _refused_then_answered(make_app, "refused-remote", options)
    scheduled = [
        event.activity_task_scheduled_event_attributes
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.activity_task_scheduled_event_attributes.activity_type.name == TOOL_CALL
    ]
    # the suspension, the refused resume, the answered one: every one with the tool's options
    assert [s.start_to_close_timeout.ToSeconds() for s in scheduled] == [77, 77, 77]
    assert [s.heartbeat_timeout.ToSeconds() for s in scheduled] == [13, 13, 13]
    assert [s.retry_policy.maximum_attempts for s in scheduled] == [4, 4, 4]
    assert any(  # behind its patch, so runs that began before it replay as they ran
        REFUSED_RESUMES_RUN_ANEW.encode() in e.SerializeToString()
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    )


async def test_an_answer_after_refused_ones_of_a_local_tool_runs_locally_and_anew(make_app: AppFactory) -> None:
    """Twice refused, then answered: every resume a local activity of its own (the answer is not taken for a refused
    one: a local activity looks for its saved outcome first, and the answer's is kept apart from the refusals')."""
    history = await _refused_then_answered(
        make_app, "refused-local", ActivityOptions(local=True, maximum_attempts=3), refusals=2
    )
    scheduled = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    local_calls = [
        event
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and event.marker_recorded_event_attributes.marker_name == "core_local_activity"
        and TOOL_CALL.encode() in event.SerializeToString()
    ]
    assert TOOL_CALL not in scheduled  # no call went through the server's task queue
    assert len(local_calls) == 4  # the suspension, the two refused resumes, the answered one
