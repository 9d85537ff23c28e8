"""Agent runs on the real adapters against provider servers on 127.0.0.1: same journal shape, retries, failures."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import pytest

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall
from tempo_agents.journal.chunks import Chunk
from tempo_agents.models.anthropic import AnthropicModel
from tempo_agents.models.openai_compatible import openai_compatible
from tempo_agents.streams.partial_args import ToolInputPreview
from tempo_agents.tools import web_search_tool
from tests.conftest import AppFactory, closed_history, running_worker
from tests.support.agents import weather_agent
from tests.support.provider_servers.anthropic_server import (
    AnthropicServer,
    error_response,
    text_response,
    tool_use_response,
)
from tests.support.provider_servers.openai_server import (
    OpenAIServer,
    ToolCallSpec,
    error_reply,
    text_stream,
    tool_calls_stream,
)


def shape(chunks: list[Chunk]) -> list[str]:
    """Chunk types in order, with runs of the same type folded into one."""
    return [kind for kind, _ in itertools.groupby(chunk.type for chunk in chunks)]


@pytest.fixture
async def openai_server() -> AsyncIterator[OpenAIServer]:
    async with OpenAIServer() as server:
        yield server


@pytest.fixture
async def anthropic_server() -> AsyncIterator[AnthropicServer]:
    async with AnthropicServer() as server:
        yield server


async def test_same_journal_shape_for_scripted_openai_and_anthropic(
    make_app: AppFactory,
    openai_server: OpenAIServer,
    anthropic_server: AnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    scripted = ScriptedModel(
        [
            ScriptedResponse(
                text="Checking both.",
                tool_calls=[
                    ScriptedToolCall("weather", {"city": "Oslo"}),
                    ScriptedToolCall("weather", {"city": "Rome"}),
                ],
            ),
            ScriptedResponse(text="Both are sunny."),
        ]
    )
    openai_server.script(
        tool_calls_stream(
            [ToolCallSpec("weather", {"city": "Oslo"}), ToolCallSpec("weather", {"city": "Rome"})],
            text="Checking both.",
            interleave=False,
        ),
        text_stream("Both are sunny."),
    )
    anthropic_server.script(
        [
            tool_use_response(("weather", {"city": "Oslo"}), ("weather", {"city": "Rome"}), text="Checking both."),
            text_response("Both are sunny."),
        ]
    )
    openai = openai_compatible("gpt-test", base_url=openai_server.base_url, api_key_env=None)
    anthropic = AnthropicModel("claude-test", base_url=anthropic_server.base_url)
    app = make_app([weather_agent(scripted, "s"), weather_agent(openai, "o"), weather_agent(anthropic, "a")])
    async with running_worker(app):
        results = {agent_id: await app.agent(agent_id).generate("Weather in Oslo and Rome?") for agent_id in "soa"}

    shapes = {agent_id: shape(result.chunks) for agent_id, result in results.items()}
    assert shapes["o"] == shapes["s"]
    assert shapes["a"] == shapes["s"]
    assert "tool-call-input-streaming-start" in shapes["s"] and "tool-call-delta" in shapes["s"]
    for result in results.values():
        assert result.text == "Checking both.Both are sunny."
        assert [r.payload.result for r in result.tool_results] == [
            {"city": "Oslo", "sky": "sunny"},
            {"city": "Rome", "sky": "sunny"},
        ]
        assert result.finish_reason == "stop"
    # The providers were sent the conversation, tools and results.
    second = openai_server.requests[1].json
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool", "tool"]
    assert second["tools"][0]["function"]["name"] == "weather"
    assert anthropic_server.requests[1].json["system"] == "Answer briefly."
    assert results["o"].usage.total_tokens > 0 and results["a"].usage.total_tokens > 0


async def test_argument_previews_while_streaming(make_app: AppFactory, openai_server: OpenAIServer) -> None:
    openai_server.script(
        tool_calls_stream([ToolCallSpec("weather", {"city": "Reykjavik"})], fragment_size=3), text_stream("Cold.")
    )
    model = openai_compatible("gpt-test", base_url=openai_server.base_url, api_key_env=None)
    app = make_app([weather_agent(model, "preview")])
    async with running_worker(app):
        result = await app.agent("preview").generate("Weather?")
    preview = ToolInputPreview()
    seen = [preview.feed(chunk) for chunk in result.chunks if chunk.type in ("tool-call-delta", "tool-call")]
    cities = [value.get("city") for value in seen if isinstance(value, dict)]
    assert cities[-1] == "Reykjavik"
    assert any(city and city != "Reykjavik" and "Reykjavik".startswith(city) for city in cities)


async def test_rate_limit_is_retried_with_a_reset_chunk(make_app: AppFactory, openai_server: OpenAIServer) -> None:
    openai_server.script(error_reply(429, "Rate limit reached", retry_after=1), text_stream("Recovered fine."))
    model = openai_compatible("gpt-test", base_url=openai_server.base_url, api_key_env=None)
    app = make_app([weather_agent(model, "limited")])
    async with running_worker(app):
        result = await app.agent("limited").generate("hi")
        history = await closed_history(app.client, result.run_id)
    assert result.finish_reason == "stop"
    assert result.text == "Recovered fine."
    assert [c.type for c in result.chunks][:3] == ["start", "step-start", "step-reset"]
    attempts = [
        e.activity_task_started_event_attributes.attempt
        for e in history.events
        if e.HasField("activity_task_started_event_attributes")
    ]
    assert attempts[0] == 2


async def test_unauthorized_fails_the_run_at_once(
    make_app: AppFactory, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong")
    anthropic_server.script(error_response(401, "authentication_error", "invalid x-api-key"))
    app = make_app([weather_agent(AnthropicModel("claude-test", base_url=anthropic_server.base_url), "denied")])
    async with running_worker(app):
        result = await app.agent("denied").generate("hi")
        history = await closed_history(app.client, result.run_id)
    assert result.finish_reason == "error"
    assert result.error is not None
    assert "anthropic" in result.error and "claude-test" in result.error and "ANTHROPIC_API_KEY" in result.error
    started = [e for e in history.events if e.HasField("activity_task_started_event_attributes")]
    assert all(e.activity_task_started_event_attributes.attempt == 1 for e in started)
    assert len(anthropic_server.requests) == 1


async def test_web_search_on_an_unsupported_provider_fails_the_run(make_app: AppFactory) -> None:
    model = ScriptedModel([ScriptedResponse(text="unused")])
    agent = Agent(id="searcher", model=model, tools={"web_search": web_search_tool})
    app = make_app([agent])
    async with running_worker(app):
        result = await app.agent("searcher").generate("search")
    assert result.finish_reason == "error"
    assert result.error == (
        "The built-in webSearchTool supports OpenAI, Anthropic, Google, and xAI models. "
        'Could not infer a supported provider from "scripted".'
    )
    assert model.requests == []


async def test_web_search_tool_is_not_executable_directly() -> None:
    from tempo_agents.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="Tool is not executable"):
        await web_search_tool.execute({})
