"""Agent runs end to end on a real Temporal dev server: chunk order, offsets, tool errors, options."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tempo_agents import (
    Agent,
    ScriptedModel,
    ScriptedResponse,
    ScriptedToolCall,
    ToolContext,
    Usage,
    create_tool,
)
from tempo_agents.errors import ConfigurationError
from tempo_agents.journal.chunks import ToolErrorChunk
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker


class CityIn(BaseModel):
    city: str


async def weather(data: CityIn, ctx: ToolContext) -> dict[str, Any]:
    await ctx.writer.write({"progress": f"looking up {data.city}"})
    return {"city": data.city, "temperature": 21}


async def population(data: CityIn, ctx: ToolContext) -> dict[str, Any]:
    await ctx.writer.custom({"type": "data-population", "data": {"city": data.city}})
    return {"city": data.city, "population": 1_000_000}


weather_tool = create_tool(id="weather-tool", description="Weather for a city", input_schema=CityIn, execute=weather)
population_tool = create_tool(
    id="population-tool", description="Population of a city", input_schema=CityIn, execute=population
)


def three_step_model() -> ScriptedModel:
    return ScriptedModel(
        [
            ScriptedResponse(
                text="Checking both.",
                tool_calls=[
                    ScriptedToolCall("weather", {"city": "Oslo"}),
                    ScriptedToolCall("population", {"city": "Oslo"}),
                ],
                usage=Usage(input_tokens=10, output_tokens=5, total_tokens=15),
            ),
            ScriptedResponse(
                tool_calls=[ScriptedToolCall("weather", {"city": "Bergen"})],
                usage=Usage(input_tokens=20, output_tokens=3, total_tokens=23),
            ),
            ScriptedResponse(
                text="Oslo is 21 degrees.", usage=Usage(input_tokens=30, output_tokens=6, total_tokens=36)
            ),
        ]
    )


def three_step_agent() -> Agent:
    return Agent(
        id="city",
        instructions="You answer questions about cities.",
        model=three_step_model(),
        tools={"weather": weather_tool, "population": population_tool},
    )


async def test_three_step_run_chunk_sequence_and_offsets(make_app: AppFactory) -> None:
    app = make_app([three_step_agent()])
    async with running_worker(app):
        stream = await app.agent("city").stream("Tell me about Oslo")
        chunks = [chunk async for chunk in stream.full_stream]
        result = await stream.result()

    assert [c.offset for c in chunks] == list(range(len(chunks)))
    assert all(c.run_id == stream.run_id for c in chunks)
    kinds = [c.type for c in chunks]
    assert kinds[:2] == ["start", "step-start"]
    assert kinds[-2:] == ["step-finish", "finish"]
    assert kinds.count("step-start") == 3 and kinds.count("step-finish") == 3
    # Step 1: text, two tool calls, then both calls' output and results (in any order), then step-finish.
    first_finish = kinds.index("step-finish")
    step_one = kinds[: first_finish + 1]
    assert step_one[2:4] == ["text-delta", "text-delta"]
    assert step_one.count("tool-call") == 2
    last_call = max(i for i, k in enumerate(step_one) if k == "tool-call")
    after_calls = step_one[last_call + 1 : -1]
    assert sorted(after_calls) == sorted(["tool-output", "data-population", "tool-result", "tool-result"])
    assert all(kinds.index(k) > last_call for k in ("tool-output", "data-population"))

    tool_output = next(c for c in chunks if c.type == "tool-output")
    assert tool_output.from_ == "USER"
    wire = tool_output.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert wire["payload"] == {
        "output": {"progress": "looking up Oslo"},
        "toolCallId": "call_0_0",
        "toolName": "weather",
    }
    data_chunk = next(c for c in chunks if c.type == "data-population")
    assert data_chunk.model_dump(by_alias=True)["data"] == {"city": "Oslo"}

    assert result.finish_reason == "stop"
    assert result.text == "Checking both.Oslo is 21 degrees."
    assert [c.payload.tool_name for c in result.tool_calls] == ["weather", "population", "weather"]
    results = {c.payload.tool_call_id: c.payload.result for c in result.tool_results}
    assert results == {
        "call_0_0": {"city": "Oslo", "temperature": 21},
        "call_0_1": {"city": "Oslo", "population": 1_000_000},
        "call_1_0": {"city": "Bergen", "temperature": 21},
    }
    assert result.usage == Usage(input_tokens=60, output_tokens=14, total_tokens=74)
    assert result.steps == 3
    finish = chunks[-1]
    assert finish.type == "finish"
    finish_wire = finish.model_dump(mode="json", by_alias=True, exclude_none=True)["payload"]
    assert finish_wire["stepResult"]["reason"] == "stop"
    assert finish_wire["output"]["text"] == "Checking both.Oslo is 21 degrees."
    assert len(finish_wire["output"]["toolCalls"]) == 3 and len(finish_wire["output"]["toolResults"]) == 3
    assert finish_wire["output"]["usage"] == {"inputTokens": 60, "outputTokens": 14, "totalTokens": 74}
    step_finish = chunks[first_finish].model_dump(mode="json", by_alias=True, exclude_none=True)["payload"]
    assert step_finish["stepResult"] == {"reason": "tool-calls", "isContinued": True, "warnings": []}
    assert step_finish["output"]["text"] == "Checking both."

    # A client attaching at offset k receives exactly chunks k..end.
    k = 7
    attached = [c async for c in app.attach(stream.run_id, offset=k).full_stream]
    assert [(c.offset, c.type) for c in attached] == [(c.offset, c.type) for c in chunks[k:]]


async def test_attach_from_a_second_process(make_app: AppFactory, tmp_path: Path) -> None:
    app = make_app([three_step_agent()])
    async with running_worker(app):
        stream = await app.agent("city").stream("Tell me about Oslo")
        chunks = [chunk async for chunk in stream.full_stream]
    script = textwrap.dedent(
        f"""
        import asyncio, json, os, sys
        from tempo_agents import App
        async def main():
            app = App(store={app.store.url!r})
            out = [(c.offset, c.type) async for c in app.attach({stream.run_id!r}, offset=4).full_stream]
            sys.stdout.write(json.dumps(out))
            sys.stdout.flush()
            os._exit(0)
        asyncio.run(main())
        """
    )
    completed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    assert [tuple(x) for x in json.loads(completed.stdout)] == [(c.offset, c.type) for c in chunks[4:]]


async def test_attach_while_running_sees_live_chunks(make_app: AppFactory) -> None:
    release = asyncio.Event()

    async def slow(request: ModelRequest) -> ScriptedResponse:
        if request.step == 1:
            await release.wait()
            return ScriptedResponse(text="done")
        return ScriptedResponse(text="working", tool_calls=[ScriptedToolCall("weather", {"city": "Rome"})])

    agent = Agent(id="slow", model=ScriptedModel(slow), tools={"weather": weather_tool})
    app = make_app([agent])
    async with running_worker(app):
        stream = await app.agent("slow").stream("go")
        seen: list[str] = []
        async for chunk in app.attach(stream.run_id).full_stream:
            seen.append(chunk.type)
            if chunk.type == "step-start" and seen.count("step-start") == 2:
                release.set()
        assert seen[-1] == "finish"
        assert await stream.text == "workingdone"


async def test_unknown_tool_and_unparseable_arguments(make_app: AppFactory) -> None:
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall("mastra:weather", {"city": "Oslo"}),
                    ScriptedToolCall("weather", '{"city": "Os'),
                ]
            ),
            ScriptedResponse(text="sorry"),
        ]
    )
    agent = Agent(id="errs", model=model, tools={"weather": weather_tool, "population": population_tool})
    app = make_app([agent])
    async with running_worker(app):
        result = await app.agent("errs").generate("hi")

    errors = [c for c in result.chunks if isinstance(c, ToolErrorChunk)]
    assert [e.payload.error for e in errors] == [
        'Tool "mastra:weather" not found. Available tools: weather, population. '
        "Call tools by their exact name only — never add prefixes, namespaces, or colons.",
        'Tool "weather" received invalid arguments — the provided JSON could not be parsed. '
        "Please provide valid JSON arguments.",
    ]
    assert errors[1].payload.args is None
    # The model sees both errors as tool results in its next step.
    seen = model.requests[1].messages
    tool_results = [part for message in seen for part in message.tool_results]
    assert [(r.tool_name, r.is_error, r.result) for r in tool_results] == [
        ("mastra:weather", True, errors[0].payload.error),
        ("weather", True, errors[1].payload.error),
    ]
    assert result.finish_reason == "stop"


async def test_unknown_tool_without_any_tools(make_app: AppFactory) -> None:
    model = ScriptedModel([ScriptedResponse(tool_calls=[ScriptedToolCall("search", {})]), ScriptedResponse(text="ok")])
    app = make_app([Agent(id="bare", model=model)])
    async with running_worker(app):
        result = await app.agent("bare").generate("hi")
    error = next(c for c in result.chunks if isinstance(c, ToolErrorChunk))
    assert error.payload.error == (
        'Tool "search" not found. Call tools by their exact name only — never add prefixes, namespaces, or colons.'
    )


async def test_active_tools_are_offered_and_enforced(make_app: AppFactory) -> None:
    calls: list[str] = []

    def record(data: CityIn) -> str:
        calls.append(data.city)
        return "ok"

    population_recording = create_tool(
        id="population-tool", description="Population", input_schema=CityIn, execute=record
    )
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("population", {"city": "Oslo"})]),
            ScriptedResponse(text="done"),
        ]
    )
    agent = Agent(id="active", model=model, tools={"weather": weather_tool, "population": population_recording})
    app = make_app([agent])
    async with running_worker(app):
        result = await app.agent("active").generate("hi", active_tools=["weather"], tool_choice="required")

    assert [t.name for t in model.requests[0].tools] == ["weather"]
    assert model.requests[0].tool_choice == "required"
    error = next(c for c in result.chunks if isinstance(c, ToolErrorChunk))
    assert error.payload.error == (
        'Tool "population" not found. Available tools: weather. '
        "Call tools by their exact name only — never add prefixes, namespaces, or colons."
    )
    assert calls == []


async def test_tool_choice_forcing_one_tool_reaches_the_model(make_app: AppFactory) -> None:
    model = ScriptedModel([ScriptedResponse(text="ok")])
    app = make_app([Agent(id="choice", model=model, tools={"weather": weather_tool})])
    async with running_worker(app):
        await app.agent("choice").generate("hi", tool_choice={"type": "tool", "toolName": "weather"})
    choice = model.requests[0].tool_choice
    assert not isinstance(choice, str) and choice.tool_name == "weather"
    assert model.requests[0].model_dump(by_alias=True)["toolChoice"] == {
        "type": "tool",
        "toolName": "weather",
    }


async def test_max_steps_finishes_with_length(make_app: AppFactory) -> None:
    model = ScriptedModel(lambda r: ScriptedResponse(tool_calls=[ScriptedToolCall("weather", {"city": "Oslo"})]))
    app = make_app([Agent(id="loop", model=model, tools={"weather": weather_tool})])
    async with running_worker(app):
        result = await app.agent("loop").generate("hi", max_steps=2)
    assert result.finish_reason == "length"
    assert result.steps == 2
    assert len(model.requests) == 2
    assert len(result.tool_results) == 2


async def test_default_max_steps_is_five(make_app: AppFactory) -> None:
    model = ScriptedModel(lambda r: ScriptedResponse(tool_calls=[ScriptedToolCall("weather", {"city": "Oslo"})]))
    app = make_app([Agent(id="loop5", model=model, tools={"weather": weather_tool})])
    async with running_worker(app):
        result = await app.agent("loop5").generate("hi")
    assert (result.finish_reason, result.steps, len(model.requests)) == ("length", 5, 5)


async def test_instructions_function_sees_request_context(make_app: AppFactory) -> None:
    model = ScriptedModel([ScriptedResponse(text="hello")])

    def instructions(request_context: dict[str, Any]) -> str:
        return f"Answer in {request_context['language']}."

    app = make_app([Agent(id="i18n", model=model, instructions=instructions)])
    async with running_worker(app):
        await app.agent("i18n").generate("hi", request_context={"language": "Norwegian"})
    system = model.requests[0].messages[0]
    assert (system.role, system.text) == ("system", "Answer in Norwegian.")
    assert model.requests[0].messages[1].text == "hi"


async def test_memory_thread_carries_earlier_runs(make_app: AppFactory) -> None:
    model = ScriptedModel(lambda r: ScriptedResponse(text=f"answer {len(r.messages)}"))
    app = make_app([Agent(id="mem", model=model, instructions="Be brief.")])
    memory = {"thread": "t1", "resource": "u1"}
    async with running_worker(app):
        first = await app.agent("mem").generate("first question", memory=memory)
        await app.agent("mem").generate("second question", memory=memory)
        await app.agent("mem").generate("other thread", memory={"thread": "t2", "resource": "u1"})
    assert first.text == "answer 2"
    second_prompt = [(m.role, m.text) for m in model.requests[1].messages]
    assert second_prompt == [
        ("system", "Be brief."),
        ("user", "first question"),
        ("assistant", "answer 2"),
        ("user", "second question"),
    ]
    assert [(m.role, m.text) for m in model.requests[2].messages] == [
        ("system", "Be brief."),
        ("user", "other thread"),
    ]
    stored = await app.store.get_thread_messages("t1", "u1")
    assert [m["role"] for m in stored] == ["user", "assistant", "user", "assistant"]


async def test_tool_definitions_sent_to_model(make_app: AppFactory) -> None:
    model = ScriptedModel([ScriptedResponse(text="ok")])
    app = make_app([Agent(id="defs", model=model, tools={"Find user tool": weather_tool})])
    async with running_worker(app):
        await app.agent("defs").generate("hi")
    (definition,) = model.requests[0].tools
    assert definition.name == "Find_user_tool"
    assert definition.description == "Weather for a city"
    assert definition.input_schema["properties"]["city"]["type"] == "string"
    assert definition.input_schema["required"] == ["city"]


async def test_agent_without_app_raises(make_app: AppFactory) -> None:
    agent = Agent(id="orphan", model=ScriptedModel([]))
    with pytest.raises(ConfigurationError, match='Agent "orphan" is not registered on an App'):
        await agent.stream("hi")


async def test_run_id_option_names_the_workflow(make_app: AppFactory) -> None:
    app = make_app([Agent(id="named", model=ScriptedModel([ScriptedResponse(text="ok")]))])
    async with running_worker(app):
        result = await app.agent("named").generate("hi", run_id="my-run-1")
        description = await app.client.get_workflow_handle("my-run-1").describe()
    assert result.run_id == "my-run-1"
    assert description.workflow_type == "AgentRunWorkflow"


async def test_a_run_is_not_started_under_an_id_no_list_filter_can_name(make_app: AppFactory) -> None:
    app = make_app([Agent(id="opts", model=ScriptedModel([]))])
    for options in (
        {"memory": {"thread": "t", "resource": "u\x00"}},
        {"memory": {"thread": "t\x00", "resource": "u"}},
        {"run_id": "r\x00"},
    ):
        with pytest.raises(ConfigurationError, match="cannot contain a NUL character"):
            await app.agent("opts").stream("hi", **options)
    with pytest.raises(ConfigurationError, match="cannot contain a NUL character"):
        await app.list_forks("r\x00")  # at once, not after Temporal's retries


async def test_unknown_run_option_is_rejected(make_app: AppFactory) -> None:
    app = make_app([Agent(id="opts", model=ScriptedModel([]))])
    with pytest.raises(ConfigurationError, match="unknown run option"):
        await app.agent("opts").stream("hi", max_stepz=3)
