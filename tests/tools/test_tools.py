"""Tools called directly, outside any run (reference §1)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tempo_agents import ToolContext, create_tool
from tempo_agents.errors import ConfigurationError
from tempo_agents.tools import DetachedWriter


class WeatherIn(BaseModel):
    location: str
    days: int = 1


class WeatherOut(BaseModel):
    temperature: float


async def test_direct_execute_validates_and_runs_without_suspend() -> None:
    seen: list[ToolContext] = []

    async def execute(data: WeatherIn, ctx: ToolContext) -> dict[str, Any]:
        seen.append(ctx)
        await ctx.writer.write({"step": "fetching"})
        return {"temperature": 21.5, "where": data.location, "days": data.days}

    tool = create_tool(id="weather-tool", description="Weather", input_schema=WeatherIn, execute=execute)
    assert await tool.execute({"location": "Oslo"}) == {"temperature": 21.5, "where": "Oslo", "days": 1}
    (ctx,) = seen
    assert ctx.suspend is None and ctx.tool_call_id is None and ctx.resume_data is None
    assert isinstance(ctx.writer, DetachedWriter)
    assert ctx.writer.chunks == [{"type": "tool-output", "payload": {"output": {"step": "fetching"}}}]


async def test_direct_execute_returns_the_validation_error_result() -> None:
    tool = create_tool(id="weather-tool", description="Weather", input_schema=WeatherIn, execute=lambda d: d)
    result = await tool.execute({"location": 5, "days": "many"})
    assert result == {
        "error": True,
        "message": (
            "Tool input validation failed for weather-tool. Please fix the following errors and try again:\n"
            "- location: Input should be a valid string\n"
            "- days: Input should be a valid integer, unable to parse string as an integer\n\n"
            'Provided arguments: {\n  "location": 5,\n  "days": "many"\n}'
        ),
        "validationErrors": {
            "errors": [],
            "fields": {
                "location": {"errors": ["Input should be a valid string"]},
                "days": {"errors": ["Input should be a valid integer, unable to parse string as an integer"]},
            },
        },
    }


async def test_stringified_json_input_is_repaired() -> None:
    class ListIn(BaseModel):
        items: list[int]

    tool = create_tool(id="sum", description="Sum", input_schema=ListIn, execute=lambda d: sum(d.items))
    assert await tool.execute({"items": "[1, 2, 3]"}) == 6


async def test_output_validation_strict_and_warn() -> None:
    strict = create_tool(
        id="weather-out", description="W", output_schema=WeatherOut, execute=lambda d: {"temperature": "hot"}
    )
    result = await strict.execute({})
    assert result["error"] is True
    assert result["message"] == (
        "Tool output validation failed for weather-out. The tool returned invalid output:\n"
        "- temperature: Input should be a valid number, unable to parse string as a number\n\n"
        'Returned output: {\n  "temperature": "hot"\n}'
    )
    warn = create_tool(
        id="weather-out",
        description="W",
        output_schema=WeatherOut,
        output_validation="warn",
        execute=lambda d: {"temperature": "hot"},
    )
    assert await warn.execute({}) == {"temperature": "hot"}


async def test_json_schema_dict_input() -> None:
    schema = {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    }
    tool = create_tool(id="search", description="Search", input_schema=schema, execute=lambda d: f"found {d['query']}")
    assert await tool.execute({"query": "cats"}) == "found cats"
    missing = await tool.execute({})
    assert missing["message"].startswith(
        "Tool input validation failed for search. Please fix the following errors and try again:\n- query: "
    )
    assert tool.model_input_schema() == schema


async def test_sync_execute_runs_off_the_event_loop() -> None:
    import threading

    main = threading.get_ident()
    tool = create_tool(id="sync", description="Sync", execute=lambda d: threading.get_ident())
    assert await tool.execute({}) != main


async def test_custom_chunk_type_must_start_with_data() -> None:
    async def execute(data: Any, ctx: ToolContext) -> None:
        await ctx.writer.custom({"type": "progress", "value": 1})

    tool = create_tool(id="custom", description="Custom", execute=execute)
    with pytest.raises(ValueError, match="starts with 'data-'"):
        await tool.execute({})


def test_create_tool_rejects_bad_definitions() -> None:
    with pytest.raises(ConfigurationError, match="non-empty string id"):
        create_tool(id="", description="x", execute=lambda d: d)
    with pytest.raises(ConfigurationError, match="needs a non-empty description"):
        create_tool(id="x", description="", execute=lambda d: d)
    with pytest.raises(ConfigurationError, match="expected a pydantic BaseModel subclass or a JSON-schema dict"):
        create_tool(id="x", description="d", input_schema=int, execute=lambda d: d)  # type: ignore[arg-type]


async def test_tool_without_execute_is_not_executable() -> None:
    tool = create_tool(id="provider-tool", description="Provider-side")
    assert not tool.executable
    with pytest.raises(ConfigurationError, match="Tool is not executable"):
        await tool.execute({})
