"""Hooks (reference §2), tool naming (§5.4), and bugs in user code failing loudly and readably."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from tempo_agents import (
    Agent,
    ScriptedModel,
    ScriptedResponse,
    ScriptedToolCall,
    ToolCallHookContext,
    ToolHooks,
    create_tool,
)
from tempo_agents.errors import ConfigurationError, ToolNameCollisionError
from tempo_agents.journal.chunks import ToolErrorChunk, ToolResultChunk
from tests.conftest import AppFactory, running_worker


class NameIn(BaseModel):
    name: str


def one_call_model(args: dict[str, Any] | None = None) -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("find_user", args or {"name": "Dero"})]),
            ScriptedResponse(text="done"),
        ]
    )


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.executions = 0

    def tool(self, fail: bool = False) -> Any:
        def execute(data: NameIn) -> dict[str, str]:
            self.executions += 1
            if fail:
                raise RuntimeError(f"lookup of {data.name} failed")
            return {"name": data.name, "email": "dero@example.test"}

        return create_tool(id="find-user-tool", description="Finds a user", input_schema=NameIn, execute=execute)

    def before(self, label: str, result: Any = None) -> Any:
        def hook(ctx: ToolCallHookContext) -> Any:
            self.events.append((f"{label}:before", (ctx.tool_name, ctx.input, dict(ctx.metadata))))
            return result

        return hook

    def after(self, label: str) -> Any:
        async def hook(ctx: ToolCallHookContext) -> Any:
            self.events.append((f"{label}:after", (ctx.output, None if ctx.error is None else str(ctx.error))))
            return "ignored"

        return hook


async def run_one(make_app: AppFactory, agent: Agent, **options: Any) -> Any:
    app = make_app([agent], hooks=options.pop("app_hooks", None))
    async with running_worker(app):
        return await app.agent(agent.id).generate("find Dero", **options)


async def test_before_and_after_hooks_wrap_execution(make_app: AppFactory) -> None:
    rec = Recorder()
    agent = Agent(
        id="hooks",
        name="Hook Agent",
        model=one_call_model(),
        tools={"find_user": rec.tool()},
        hooks=ToolHooks(before_tool_call=rec.before("agent"), after_tool_call=rec.after("agent")),
    )
    result = await run_one(make_app, agent)
    assert rec.events == [
        ("agent:before", ("find_user", {"name": "Dero"}, {"agent_id": "hooks", "agent_name": "Hook Agent"})),
        ("agent:after", ({"name": "Dero", "email": "dero@example.test"}, None)),
    ]
    assert result.tool_results[0].payload.result == {"name": "Dero", "email": "dero@example.test"}


async def test_before_hook_short_circuits(make_app: AppFactory) -> None:
    rec = Recorder()
    agent = Agent(
        id="short",
        model=one_call_model({"wrong": 1}),
        tools={"find_user": rec.tool()},
        hooks={
            "before_tool_call": rec.before("agent", {"proceed": False, "output": {"cached": True}}),
            "after_tool_call": rec.after("agent"),
        },
    )
    result = await run_one(make_app, agent)
    assert rec.executions == 0
    assert [e[0] for e in rec.events] == ["agent:before"]
    (tool_result,) = result.tool_results
    assert tool_result.payload.result == {"cached": True}


async def test_proceed_true_continues(make_app: AppFactory) -> None:
    rec = Recorder()
    agent = Agent(
        id="proceed",
        model=one_call_model(),
        tools={"find_user": rec.tool()},
        hooks=ToolHooks(before_tool_call=rec.before("agent", {"proceed": True})),
    )
    await run_one(make_app, agent)
    assert rec.executions == 1


async def test_error_is_reraised_after_after_hook(make_app: AppFactory) -> None:
    rec = Recorder()
    agent = Agent(
        id="fails",
        model=one_call_model(),
        tools={"find_user": rec.tool(fail=True)},
        hooks=ToolHooks(after_tool_call=rec.after("agent")),
    )
    result = await run_one(make_app, agent)
    assert rec.events == [("agent:after", (None, "lookup of Dero failed"))]
    error = next(c for c in result.chunks if isinstance(c, ToolErrorChunk))
    assert error.payload.error == "lookup of Dero failed"
    assert error.payload.args == {"name": "Dero"}
    assert result.finish_reason == "stop"


async def test_run_level_hooks_merge_key_by_key(make_app: AppFactory) -> None:
    rec = Recorder()
    agent = Agent(
        id="merge",
        model=one_call_model(),
        tools={"find_user": rec.tool()},
        hooks=ToolHooks(before_tool_call=rec.before("agent"), after_tool_call=rec.after("agent")),
    )
    result = await run_one(
        make_app, agent, hooks="audit", app_hooks={"audit": ToolHooks(before_tool_call=rec.before("run"))}
    )
    assert [e[0] for e in rec.events] == ["run:before", "agent:after"]
    assert result.finish_reason == "stop"


async def test_raw_callable_as_run_hooks_is_refused(make_app: AppFactory) -> None:
    rec = Recorder()
    app = make_app([Agent(id="raw", model=one_call_model(), tools={"find_user": rec.tool()})])
    with pytest.raises(ConfigurationError, match="code cannot travel from a client to a worker"):
        await app.agent("raw").stream("hi", hooks=ToolHooks(before_tool_call=rec.before("x")))
    with pytest.raises(ConfigurationError, match='no hooks named "nope"'):
        await app.agent("raw").stream("hi", hooks="nope")


async def test_hook_that_raises_fails_the_call_readably(make_app: AppFactory) -> None:
    rec = Recorder()

    def broken(ctx: ToolCallHookContext) -> None:
        raise ValueError("audit backend unavailable")

    agent = Agent(
        id="brokenhook",
        model=one_call_model(),
        tools={"find_user": rec.tool()},
        hooks={"before_tool_call": broken},
    )
    result = await run_one(make_app, agent)
    error = next(c for c in result.chunks if isinstance(c, ToolErrorChunk))
    assert error.payload.error == "audit backend unavailable"
    assert rec.executions == 0
    assert result.finish_reason == "stop"


async def test_unserialisable_output_fails_the_call_readably(make_app: AppFactory) -> None:
    class Opaque:
        pass

    tool = create_tool(id="opaque", description="Returns junk", execute=lambda data: {"handle": Opaque()})
    model = ScriptedModel([ScriptedResponse(tool_calls=[ScriptedToolCall("opaque", {})]), ScriptedResponse(text="ok")])
    result = await run_one(make_app, Agent(id="junk", model=model, tools={"opaque": tool}))
    error = next(c for c in result.chunks if isinstance(c, ToolErrorChunk))
    assert error.payload.error.startswith('Tool "opaque" returned a value that cannot be stored as JSON: ')
    assert "Opaque" in error.payload.error
    assert result.finish_reason == "stop"
    # the model saw the same message
    results = [p for m in model.requests[1].messages for p in m.tool_results]
    assert results[0].is_error and results[0].result == error.payload.error


async def test_input_validation_failure_is_a_result_the_model_sees(make_app: AppFactory) -> None:
    rec = Recorder()
    model = one_call_model({"name": 42})
    result = await run_one(make_app, Agent(id="badinput", model=model, tools={"find_user": rec.tool()}))
    assert rec.executions == 0
    (tool_result,) = [c for c in result.chunks if isinstance(c, ToolResultChunk)]
    assert tool_result.payload.result["error"] is True
    assert tool_result.payload.result["message"] == (
        "Tool input validation failed for find-user-tool. Please fix the following errors and try again:\n"
        "- name: Input should be a valid string\n\n"
        'Provided arguments: {\n  "name": 42\n}'
    )
    assert not any(c.type == "tool-error" for c in result.chunks)


async def test_to_model_output_changes_only_what_the_model_sees(make_app: AppFactory) -> None:
    tool = create_tool(
        id="big",
        description="Big output",
        execute=lambda data: {"text": "short", "raw": list(range(5))},
        to_model_output=lambda output: {"type": "text", "value": output["text"]},
    )
    model = ScriptedModel([ScriptedResponse(tool_calls=[ScriptedToolCall("big", {})]), ScriptedResponse(text="ok")])
    result = await run_one(make_app, Agent(id="tmo", model=model, tools={"big": tool}))
    assert result.tool_results[0].payload.result == {"text": "short", "raw": [0, 1, 2, 3, 4]}
    seen = [p for m in model.requests[1].messages for p in m.tool_results]
    assert seen[0].result == {"type": "text", "value": "short"}


async def test_model_configuration_error_fails_the_run_once(make_app: AppFactory) -> None:
    agent = Agent(id="nomodel", model="acme/super-1")
    app = make_app([agent])
    async with running_worker(app):
        stream = await app.agent("nomodel").stream("hi")
        result = await stream.result()
        handle = app.client.get_workflow_handle(stream.run_id)
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        description = await handle.describe()
        history = await handle.fetch_history()
    assert result.finish_reason == "error"
    assert result.error == (
        'agent "nomodel": no adapter for model provider "acme" (model "acme/super-1") is installed on this worker; '
        'use "openai/<model>", "anthropic/<model>", openai_compatible(...) for other OpenAI-compatible servers, '
        "or a Model object such as ScriptedModel"
    )
    assert description.status == WorkflowExecutionStatus.FAILED
    scheduled = [e for e in history.events if e.HasField("activity_task_scheduled_event_attributes")]
    started = [e for e in history.events if e.HasField("activity_task_started_event_attributes")]
    assert len(scheduled) == 2  # the model step (no retry) and the finish activity
    assert all(e.activity_task_started_event_attributes.attempt == 1 for e in started)


def test_tool_names_are_sanitised() -> None:
    tool = create_tool(id="t", description="d", execute=lambda data: None)
    agent = Agent(
        id="names",
        model=ScriptedModel([]),
        tools={"Find user tool": tool, "9lives": tool, "a" * 70: tool, "ok-name_1": tool},
    )
    assert list(agent.tools) == ["Find_user_tool", "_9lives", "a" * 63, "ok-name_1"]


def test_tool_name_collision_raises_reference_text() -> None:
    tool = create_tool(id="t", description="d", execute=lambda data: None)
    with pytest.raises(ToolNameCollisionError) as raised:
        Agent(id="c", model=ScriptedModel([]), tools={"find user": tool, "find_user": tool})
    assert str(raised.value) == (
        'Two or more tools resolve to the same name "find_user". '
        "Please rename one of the tools to avoid this collision."
    )
    assert raised.value.code == "AGENT_TOOL_NAME_COLLISION"


async def test_cancelling_a_run_reaches_the_running_tool(make_app: AppFactory) -> None:
    import asyncio

    started = asyncio.Event()
    observed: list[bool] = []

    async def slow(data: dict[str, Any], ctx: Any) -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            observed.append(ctx.cancelled.is_set())
            raise
        return "never"

    tool = create_tool(id="slow", description="Slow", execute=slow)
    model = ScriptedModel([ScriptedResponse(tool_calls=[ScriptedToolCall("slow", {})]), ScriptedResponse(text="x")])
    app = make_app([Agent(id="cancel", model=model, tools={"slow": tool})])
    async with running_worker(app):
        stream = await app.agent("cancel").stream("go")
        await asyncio.wait_for(started.wait(), 30)
        await app.cancel_run(stream.run_id)
        result = await asyncio.wait_for(stream.result(), 30)
        handle = app.client.get_workflow_handle(stream.run_id)
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        description = await handle.describe()

    assert result.finish_reason == "aborted"
    assert "abort" in [c.type for c in result.chunks]
    assert observed == [True]
    assert description.status == WorkflowExecutionStatus.CANCELED
