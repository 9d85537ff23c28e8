"""Tools and model steps that declare themselves short run as local activities, on a real dev server."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from temporalio.api.enums.v1 import EventType

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.activity_options import LOCAL_TASK_TIMEOUT, ActivityOptions
from tempo_agents.journal.chunks import ToolErrorChunk, ToolOutputChunk
from tempo_agents.workflows.activity_calls import LOCAL_ACTIVITIES
from tests.conftest import AppFactory, closed_history, running_worker

SHORT = ActivityOptions(local=True)


class CityIn(BaseModel):
    city: str


executions: list[tuple[str, int]] = []


async def weather(data: CityIn, ctx: ToolContext) -> dict[str, Any]:
    executions.append((str(ctx.tool_call_id), ctx.attempt))
    await ctx.writer.write({"progress": f"looking up {data.city}"})
    return {"city": data.city, "temperature": 21}


async def failing(data: CityIn) -> None:
    raise RuntimeError(f"no data for {data.city}")


def _agent(model_local: bool = False) -> Agent:
    return Agent(
        id="local-city",
        instructions="You answer weather questions.",
        model=ScriptedModel(
            [
                ScriptedResponse(
                    text="Checking.",
                    tool_calls=[
                        ScriptedToolCall("weather", {"city": "Oslo"}),
                        ScriptedToolCall("slow_weather", {"city": "Bergen"}),
                        ScriptedToolCall("broken", {"city": "Tromsø"}),
                    ],
                ),
                ScriptedResponse(text="Oslo is 21 degrees."),
            ]
        ),
        tools={
            "weather": create_tool(
                id="weather", description="Weather", input_schema=CityIn, execute=weather, activity=SHORT
            ),
            "slow_weather": create_tool(id="slow-weather", description="Weather", input_schema=CityIn, execute=weather),
            "broken": create_tool(
                id="broken", description="Always fails", input_schema=CityIn, execute=failing, activity=SHORT
            ),
        },
        model_step_activity=ActivityOptions(local=True) if model_local else None,
    )


def _scheduled(history: Any) -> tuple[list[str], int]:
    """Activity types scheduled through the server, and local activities recorded as markers."""
    activities = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    markers = [
        event.marker_recorded_event_attributes.marker_name
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    ]
    return activities, markers.count("core_local_activity")


async def test_short_tools_run_locally_with_the_same_journal(make_app: AppFactory) -> None:
    """A tool declared ``local`` runs without a server round trip (a marker in history, no scheduled activity);
    its output, result and a failing local tool's error reach the journal as an activity's would, and the run's
    workflow task timeout is the short one that bounds recovery."""
    executions.clear()
    app = make_app([_agent()])
    async with running_worker(app):
        stream = await app.agent("local-city").stream("Weather in Oslo?")
        result = await stream.result()
        history = await closed_history(app.client, stream.run_id)

    assert result.text == "Checking.Oslo is 21 degrees."
    results = {r.payload.tool_call_id: r.payload.result for r in result.tool_results}
    assert results == {
        "call_0_0": {"city": "Oslo", "temperature": 21},
        "call_0_1": {"city": "Bergen", "temperature": 21},
    }
    chunks = [c async for c in app.attach(stream.run_id).full_stream]
    errors = [c for c in chunks if isinstance(c, ToolErrorChunk)]
    assert len(errors) == 1 and errors[0].payload.tool_name == "broken"
    outputs = [c for c in chunks if isinstance(c, ToolOutputChunk)]
    assert {o.payload.tool_call_id for o in outputs} == {"call_0_0", "call_0_1"}
    assert sorted(executions) == [("call_0_0", 1), ("call_0_1", 1)]

    activities, local = _scheduled(history)
    assert activities.count("tempo_agents.tool_call") == 1  # slow_weather, not declared local
    assert local == 2  # weather and broken
    assert activities.count("tempo_agents.model_step") == 2
    started = history.events[0].workflow_execution_started_event_attributes
    assert started.workflow_task_timeout.ToSeconds() == LOCAL_TASK_TIMEOUT.total_seconds()
    patches = [
        e
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == "core_patch"
    ]
    assert any(LOCAL_ACTIVITIES.encode() in e.SerializeToString() for e in patches)


async def test_model_steps_can_run_locally(make_app: AppFactory) -> None:
    """``Agent(model_step_activity=ActivityOptions(local=True))``: a run whose steps and short tools are all local
    schedules only its remaining activity through the server, and ends as usual."""
    app = make_app([_agent(model_local=True)])
    async with running_worker(app):
        result = await app.agent("local-city").generate("Weather in Oslo?")
        history = await closed_history(app.client, result.run_id)
    assert result.text == "Checking.Oslo is 21 degrees."
    assert result.finish_reason == "stop"
    activities, local = _scheduled(history)
    assert "tempo_agents.model_step" not in activities
    assert local == 4


async def test_agents_without_local_activities_keep_the_default_task_timeout(make_app: AppFactory) -> None:
    """Nothing changes for agents that declare nothing local: no local-activities patch marker, Temporal's default
    task timeout."""
    agent = Agent(
        id="plain",
        model=ScriptedModel([ScriptedResponse(text="Hi.")]),
    )
    app = make_app([agent])
    async with running_worker(app):
        result = await app.agent("plain").generate("hello")
        history = await closed_history(app.client, result.run_id)
    started = history.events[0].workflow_execution_started_event_attributes
    assert started.workflow_task_timeout.ToSeconds() == 10
    markers = [e for e in history.events if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED]
    assert not any(LOCAL_ACTIVITIES.encode() in e.SerializeToString() for e in markers)


async def confirm(data: CityIn, ctx: ToolContext) -> dict[str, Any]:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        await ctx.suspend({"city": data.city})
    return {"city": data.city, "confirmed": ctx.resume_data}


async def test_a_suspended_local_tool_is_resumed_locally(make_app: AppFactory) -> None:
    """A local tool that suspends is resumed with its own options: both of its calls are local activities, and the
    resumed one sees the resume data."""
    agent = Agent(
        id="local-confirm",
        model=ScriptedModel(
            [
                ScriptedResponse(tool_calls=[ScriptedToolCall("confirm", {"city": "Oslo"})]),
                ScriptedResponse(text="Confirmed."),
            ]
        ),
        tools={
            "confirm": create_tool(
                id="confirm", description="Asks first", input_schema=CityIn, execute=confirm, activity=SHORT
            )
        },
    )
    app = make_app([agent])
    async with running_worker(app):
        first = await app.agent("local-confirm").generate("Confirm Oslo")
        assert first.finish_reason == "suspended"
        resumed = await app.agent("local-confirm").resume_generate({"ok": True}, run_id=first.run_id)
        history = await closed_history(app.client, first.run_id)
    assert resumed.text == "Confirmed."
    assert [r.payload.result for r in resumed.tool_results] == [{"city": "Oslo", "confirmed": {"ok": True}}]
    activities, local = _scheduled(history)
    assert "tempo_agents.tool_call" not in activities
    assert local == 2
