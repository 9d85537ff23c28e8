"""The Anthropic adapter against a real local HTTP server speaking the Messages streaming wire format."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tempo_agents.errors import ConfigurationError, ModelError
from tempo_agents.models.anthropic import AnthropicModel, anthropic, build_request_body, from_model_string
from tempo_agents.models.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tempo_agents.models.model import (
    FinishEvent,
    Model,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallEvent,
    ToolChoiceTool,
    ToolDefinition,
    ToolInputDelta,
    ToolInputEnd,
    ToolInputStart,
    ToolResultEvent,
)
from tempo_agents.models.usage import Usage
from tests.support.provider_servers.anthropic_server import (
    AnthropicServer,
    JSONResponse,
    MessageStream,
    error_response,
    text_response,
    tool_use_response,
)

pytestmark = pytest.mark.timeout(30)

KEY = "sk-ant-test-key"
WEATHER = ToolDefinition(
    name="get_weather",
    description="Weather in a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
SEARCH = ToolDefinition(name="web_search", description="Search the web", input_schema={}, kind="web_search")


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture
async def server() -> AsyncIterator[AnthropicServer]:
    async with AnthropicServer() as running:
        yield running


def request(*messages: Message | str, tools: list[ToolDefinition] | None = None, **settings: Any) -> ModelRequest:
    converted = [Message(role="user", content=[TextPart(text=m)]) if isinstance(m, str) else m for m in messages]
    return ModelRequest(run_id="run-1", step=0, messages=converted, tools=tools or [], settings=settings)


async def collect(model: AnthropicModel, model_request: ModelRequest) -> list[ModelEvent]:
    return [event async for event in model.stream(model_request)]


async def failure(model: AnthropicModel, model_request: ModelRequest) -> ModelError:
    with pytest.raises(ModelError) as caught:
        await collect(model, model_request)
    return caught.value


def text_of(events: list[ModelEvent]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


# --- streaming ---------------------------------------------------------------------------------------------------


async def test_text_streams_token_by_token_with_usage_and_headers(server: AnthropicServer) -> None:
    server.script(text_response(["Hello", ",", " world", "!"], input_tokens=21, output_tokens=9))
    model = AnthropicModel("claude-test-1", base_url=server.base_url)
    assert isinstance(model, Model)
    assert (model.provider, model.model_id) == ("anthropic", "claude-test-1")

    events = await collect(model, request("Hi"))

    assert events == [
        TextDelta(text="Hello"),
        TextDelta(text=","),
        TextDelta(text=" world"),
        TextDelta(text="!"),
        FinishEvent(finish_reason="stop", usage=Usage(input_tokens=21, output_tokens=9, total_tokens=30)),
    ]
    [sent] = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert sent.json == {
        "model": "claude-test-1",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        "stream": True,
    }


async def test_tool_use_blocks_stream_their_fragmented_input(server: AnthropicServer) -> None:
    stream = (
        MessageStream(input_tokens=30, cache_read_input_tokens=100, cache_creation_input_tokens=5)
        .text("Let me check.")
        .tool_use("get_weather", {"city": "Paris"}, id="toolu_A", chunks=['{"ci', 'ty": "Pa', 'ris"}'])
        .tool_use("get_weather", {"city": "Oslo"}, id="toolu_B", chunks=4)
        .finish("tool_use", output_tokens=42)
    )
    server.script(stream.build(chunk_size=7))  # every event also arrives cut into 7-byte HTTP chunks
    model = AnthropicModel("claude-test", base_url=server.base_url)

    events = await collect(model, request("Weather?", tools=[WEATHER]))

    assert text_of(events) == "Let me check."
    tool_events = [event for event in events if not isinstance(event, TextDelta)]
    oslo = json.dumps({"city": "Oslo"})
    assert tool_events[:5] == [
        ToolInputStart(tool_call_id="toolu_A", tool_name="get_weather"),
        ToolInputDelta(tool_call_id="toolu_A", args_text_delta='{"ci'),
        ToolInputDelta(tool_call_id="toolu_A", args_text_delta='ty": "Pa'),
        ToolInputDelta(tool_call_id="toolu_A", args_text_delta='ris"}'),
        ToolInputEnd(tool_call_id="toolu_A"),
    ]
    paris = ToolCallEvent(tool_call_id="toolu_A", tool_name="get_weather", args_text='{"city": "Paris"}')
    assert tool_events[5] == paris
    assert tool_events[6] == ToolInputStart(tool_call_id="toolu_B", tool_name="get_weather")
    oslo_deltas = [e for e in tool_events if isinstance(e, ToolInputDelta) and e.tool_call_id == "toolu_B"]
    assert len(oslo_deltas) == 4 and "".join(d.args_text_delta for d in oslo_deltas) == oslo
    assert tool_events[-3:] == [
        ToolInputEnd(tool_call_id="toolu_B"),
        ToolCallEvent(tool_call_id="toolu_B", tool_name="get_weather", args_text=oslo),
        FinishEvent(
            finish_reason="tool-calls",
            usage=Usage(input_tokens=135, output_tokens=42, total_tokens=177),
            cached_input_tokens=100,  # the cache reads among the input tokens, priced lower by budgets
        ),
    ]
    assert server.requests[0].json["tools"] == [
        {"name": "get_weather", "description": "Weather in a city", "input_schema": WEATHER.input_schema}
    ]
    assert server.requests[0].json["tool_choice"] == {"type": "auto"}


async def test_tool_use_without_input_has_empty_object_args(server: AnthropicServer) -> None:
    server.script(MessageStream().tool_use("now", "", id="toolu_now").finish("tool_use"))
    model = AnthropicModel("claude-test", base_url=server.base_url)

    events = await collect(model, request("time?"))

    assert events[:3] == [
        ToolInputStart(tool_call_id="toolu_now", tool_name="now"),
        ToolInputEnd(tool_call_id="toolu_now"),
        ToolCallEvent(tool_call_id="toolu_now", tool_name="now", args_text="{}"),
    ]


async def test_web_search_is_a_provider_executed_server_tool(server: AnthropicServer) -> None:
    results = [
        {"url": "https://example.com/a", "title": "A", "page_age": "April 1, 2025"},
        {"url": "https://example.com/b", "title": "B"},
    ]
    citation = {
        "type": "web_search_result_location",
        "url": "https://example.com/a",
        "title": "A",
        "encrypted_index": "Eo8B",
        "cited_text": "sunny",
    }
    stream = (
        MessageStream()
        .text("Searching.")
        .server_tool_use({"query": "weather paris"}, id="srvtoolu_S1", chunks=2)
        .web_search_result(results)
    )
    stream.event(
        "content_block_start",
        {"type": "content_block_start", "index": 3, "content_block": {"type": "text", "text": "", "citations": []}},
    )
    stream.event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 3, "delta": {"type": "citations_delta", "citation": citation}},
    )
    stream.event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "It is sunny."}},
    )
    stream.event("content_block_stop", {"type": "content_block_stop", "index": 3})
    server.script(stream.finish("end_turn", input_tokens=2000, output_tokens=50))
    model = AnthropicModel("claude-test", base_url=server.base_url)
    search = SEARCH.model_copy(update={"name": "webSearch"})

    events = await collect(model, request("Weather in Paris?", tools=[WEATHER, search]))

    assert server.requests[0].json["tools"][1] == {"type": "web_search_20250305", "name": "web_search"}
    assert text_of(events) == "Searching.It is sunny."
    non_text = [event for event in events if not isinstance(event, TextDelta)]
    query = json.dumps({"query": "weather paris"})
    assert non_text[0] == ToolInputStart(tool_call_id="srvtoolu_S1", tool_name="webSearch")
    assert "".join(e.args_text_delta for e in non_text if isinstance(e, ToolInputDelta)) == query
    call = next(event for event in non_text if isinstance(event, ToolCallEvent))
    assert call == ToolCallEvent(
        tool_call_id="srvtoolu_S1", tool_name="webSearch", args_text=query, provider_executed=True
    )
    result = next(event for event in non_text if isinstance(event, ToolResultEvent))
    assert (result.tool_call_id, result.tool_name, result.provider_executed) == ("srvtoolu_S1", "webSearch", True)
    assert [item["url"] for item in result.result] == ["https://example.com/a", "https://example.com/b"]
    assert all(item["type"] == "web_search_result" and item["encrypted_content"] for item in result.result)
    assert non_text.index(call) < non_text.index(result)
    assert events[-1] == FinishEvent(
        finish_reason="stop", usage=Usage(input_tokens=2000, output_tokens=50, total_tokens=2050)
    )


@pytest.mark.parametrize(
    ("stop_reason", "finish_reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool-calls"),
        ("pause_turn", "other"),
        ("refusal", "content-filter"),
        ("something_new", "other"),
    ],
)
async def test_stop_reasons(server: AnthropicServer, stop_reason: str, finish_reason: str) -> None:
    server.script(text_response("ok", stop_reason=stop_reason))
    events = await collect(AnthropicModel("claude-test", base_url=server.base_url), request("x"))
    assert isinstance(events[-1], FinishEvent) and events[-1].finish_reason == finish_reason


# --- request mapping ---------------------------------------------------------------------------------------------


async def test_conversation_mapping(server: AnthropicServer) -> None:
    messages = [
        Message(role="system", content=[TextPart(text="You are terse.")]),
        Message(role="user", content=[TextPart(text="Weather in Paris and Oslo?")]),
        Message(role="user", content=[TextPart(text="Quickly.")]),
        Message(
            role="assistant",
            content=[
                TextPart(text="Checking."),
                ToolCallPart(tool_call_id="toolu_1", tool_name="get_weather", args={"city": "Paris"}),
                ToolCallPart(tool_call_id="toolu_2", tool_name="get_weather", args='{"city": "Oslo"}'),
                ToolCallPart(tool_call_id="toolu_3", tool_name="get_weather", args="{not json"),
                ToolCallPart(tool_call_id="toolu_4", tool_name="get_weather", args=None),
            ],
        ),
        Message(
            role="tool",
            content=[
                ToolResultPart(tool_call_id="toolu_1", tool_name="get_weather", result="sunny"),
            ],
        ),
        Message(
            role="tool",
            content=[
                ToolResultPart(tool_call_id="toolu_2", tool_name="get_weather", result={"temp": -3, "sky": "snow"}),
                ToolResultPart(tool_call_id="toolu_3", tool_name="get_weather", result="bad args", is_error=True),
                ToolResultPart(tool_call_id="toolu_4", tool_name="get_weather", result=None),
            ],
        ),
        Message(role="system", content=[TextPart(text="Answer in French.")]),
        Message(role="user", content=[TextPart(text="And tomorrow?")]),
    ]
    server.script(text_response("Ensoleillé."))
    model = AnthropicModel("claude-test", base_url=server.base_url)
    model_request = ModelRequest(
        run_id="r",
        step=3,
        messages=messages,
        tools=[WEATHER, SEARCH],
        tool_choice=ToolChoiceTool(tool_name="get_weather"),
        settings={
            "max_tokens": 300,
            "temperature": 0.2,
            "top_p": 0.9,
            "stop": "END",
            "provider_options": {"anthropic": {"metadata": {"user_id": "u1"}}, "openai": {"store": True}},
            "seed": 7,
        },
    )

    await collect(model, model_request)

    body = server.requests[0].json
    assert body["system"] == "You are terse.\n\nAnswer in French."
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Weather in Paris and Oslo?"}, {"type": "text", "text": "Quickly."}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "toolu_3", "name": "get_weather", "input": {}},
                {"type": "tool_use", "id": "toolu_4", "name": "get_weather", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny", "is_error": False},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": '{"temp": -3, "sky": "snow"}',
                    "is_error": False,
                },
                {"type": "tool_result", "tool_use_id": "toolu_3", "content": "bad args", "is_error": True},
                {"type": "tool_result", "tool_use_id": "toolu_4", "content": "null", "is_error": False},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "get_weather", "description": "Weather in a city", "input_schema": WEATHER.input_schema},
        {"type": "web_search_20250305", "name": "web_search"},
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert (body["max_tokens"], body["temperature"], body["top_p"]) == (300, 0.2, 0.9)
    assert body["stop_sequences"] == ["END"]
    assert body["metadata"] == {"user_id": "u1"}
    assert "seed" not in body and "openai" not in body and body["stream"] is True


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        (ToolChoiceTool(tool_name="get_weather"), {"type": "tool", "name": "get_weather"}),
        (ToolChoiceTool(tool_name="webSearch"), {"type": "tool", "name": "web_search"}),
    ],
)
def test_tool_choice(choice: Any, expected: dict[str, str]) -> None:
    tools = [WEATHER, SEARCH.model_copy(update={"name": "webSearch"})]
    model_request = ModelRequest(run_id="r", step=0, messages=[], tools=tools, tool_choice=choice)
    assert build_request_body("claude-test", model_request)["tool_choice"] == expected


def test_request_body_details() -> None:
    no_tools = ModelRequest(
        run_id="r",
        step=0,
        messages=[],
        tool_choice="required",
        settings={
            "maxTokens": 50,
            "stopSequences": ["a", "b"],
            "topK": 5,
            "providerOptions": {"thinking": {"type": "enabled", "budget_tokens": 1024}, "stream": False},
        },
    )
    body = build_request_body("m", no_tools)
    assert "tools" not in body and "tool_choice" not in body  # the API refuses tool_choice without tools
    assert (body["max_tokens"], body["stop_sequences"], body["top_k"]) == (50, ["a", "b"], 5)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert body["stream"] is True
    for bad in (0, "many", 1.5, True):
        with pytest.raises(ConfigurationError, match="max_tokens must be a positive integer"):
            build_request_body("m", ModelRequest(run_id="r", step=0, messages=[], settings={"max_tokens": bad}))
    # A server tool call replayed from history goes back with its result, in the assistant message.
    search_results = [
        {"type": "web_search_result", "url": "https://e.com", "title": "E", "encrypted_content": "x", "page_age": None}
    ]
    history = [
        Message(role="user", content=[TextPart(text="q")]),
        Message(
            role="assistant",
            content=[
                ToolCallPart(tool_call_id="srvtoolu_1", tool_name="webSearch", args={"query": "q"}),
                ToolResultPart(tool_call_id="srvtoolu_1", tool_name="webSearch", result=search_results),
                TextPart(text="Found it."),
            ],
        ),
        Message(role="user", content=[TextPart(text="thanks")]),
    ]
    body = build_request_body("m", ModelRequest(run_id="r", step=0, messages=history))
    assert body["messages"][1]["content"] == [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": search_results},
        {"type": "text", "text": "Found it."},
    ]


# --- errors ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_type", "retryable", "hint"),
    [
        (400, "invalid_request_error", False, "fix the request"),
        (401, "authentication_error", False, "ANTHROPIC_API_KEY"),
        (403, "permission_error", False, "ANTHROPIC_API_KEY"),
        (404, "not_found_error", False, 'model name "claude-nope"'),
        (413, "request_too_large", False, "too large"),
        (500, "api_error", True, "server error"),
        (503, "api_error", True, "server error"),
        (529, "overloaded_error", True, "overloaded"),
    ],
)
async def test_http_errors_classify_themselves(
    server: AnthropicServer, status: int, error_type: str, retryable: bool, hint: str
) -> None:
    server.script(error_response(status, error_type, "the provider's words"))
    error = await failure(AnthropicModel("claude-nope", base_url=server.base_url), request("x"))
    assert (error.retryable, error.status, error.retry_after) == (retryable, status, None)
    assert (error.provider, error.model) == ("anthropic", "claude-nope")
    assert "anthropic/claude-nope" in str(error) and "the provider's words" in str(error)
    assert error_type in str(error) and hint in str(error) and "req_test" in str(error)


async def test_rate_limit_carries_retry_after(server: AnthropicServer) -> None:
    server.script(error_response(429, "rate_limit_error", "Number of requests exceeded", retry_after=7))
    server.script(error_response(429, "rate_limit_error", "slow", headers={"retry-after-ms": "1500"}))
    model = AnthropicModel("claude-test", base_url=server.base_url)
    error = await failure(model, request("x"))
    assert (error.retryable, error.status, error.retry_after) == (True, 429, 7.0)
    assert "retry after 7 s" in str(error)
    assert (await failure(model, request("x"))).retry_after == 1.5


async def test_x_should_retry_header_wins(server: AnthropicServer) -> None:
    server.script(error_response(500, "api_error", "do not retry", headers={"x-should-retry": "false"}))
    error = await failure(AnthropicModel("claude-test", base_url=server.base_url), request("x"))
    assert (error.retryable, error.status) == (False, 500)


async def test_missing_key_fails_without_calling(server: AnthropicServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    error = await failure(AnthropicModel("claude-test", base_url=server.base_url), request("x"))
    assert not error.retryable and error.status is None
    assert "anthropic/claude-test" in str(error) and "ANTHROPIC_API_KEY" in str(error)
    assert server.requests == []


async def test_wrong_key_is_rejected_by_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    async with AnthropicServer(api_key="the-right-key") as server:
        server.script(text_response("never sent"))
        error = await failure(AnthropicModel("claude-test", base_url=server.base_url), request("x"))
        assert (error.retryable, error.status) == (False, 401)
        assert "invalid x-api-key" in str(error)
        assert server.pending == 1
        monkeypatch.setenv("ANTHROPIC_API_KEY", "the-right-key")
        assert text_of(await collect(AnthropicModel("claude-test", base_url=server.base_url), request("x"))) == (
            "never sent"
        )


@pytest.mark.parametrize(
    ("error_type", "retryable", "status"),
    [("overloaded_error", True, 529), ("api_error", True, 500), ("invalid_request_error", False, 400)],
)
async def test_error_event_mid_stream(server: AnthropicServer, error_type: str, retryable: bool, status: int) -> None:
    server.script(MessageStream().text("partial answer").error(error_type, "Overloaded").build())
    events: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in AnthropicModel("claude-test", base_url=server.base_url).stream(request("x")):
            events.append(event)
    assert text_of(events) == "partial answer"
    assert not any(isinstance(event, FinishEvent) for event in events)
    assert (caught.value.retryable, caught.value.status) == (retryable, status)
    assert error_type in str(caught.value) and "mid-stream" in str(caught.value)


async def test_stalled_stream_is_a_retryable_timeout(server: AnthropicServer) -> None:
    server.script(MessageStream().text("Hel").stall(30).text("lo").finish().build())
    model = AnthropicModel("claude-test", base_url=server.base_url, read_timeout=0.3)
    events: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in model.stream(request("x")):
            events.append(event)
    assert text_of(events) == "Hel"
    assert caught.value.retryable and caught.value.status is None
    assert "stalled" in str(caught.value)
    await asyncio.wait_for(server.requests[0].disconnected.wait(), 5)


async def test_dropped_connection_is_retryable(server: AnthropicServer) -> None:
    server.script(MessageStream().text("Hello wor").drop().build())
    error = await failure(AnthropicModel("claude-test", base_url=server.base_url), request("x"))
    assert error.retryable and "dropped" in str(error)


async def test_stream_ending_before_message_stop_is_retryable(server: AnthropicServer) -> None:
    server.script(MessageStream().text("Hello").build())  # the body ends cleanly but the message never does
    error = await failure(AnthropicModel("claude-test", base_url=server.base_url), request("x"))
    assert error.retryable and "message_stop" in str(error)


async def test_unreachable_server_is_retryable() -> None:
    async with AnthropicServer() as gone:
        base_url = gone.base_url
    error = await failure(AnthropicModel("claude-test", base_url=base_url), request("x"))
    assert error.retryable and error.status is None


async def test_malformed_events_and_non_stream_responses(server: AnthropicServer) -> None:
    server.script(MessageStream().raw(b"event: content_block_delta\ndata: {oops\n\n").build())
    server.script(JSONResponse(200, {"type": "message", "content": []}))
    server.script(JSONResponse(200, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}))
    model = AnthropicModel("claude-test", base_url=server.base_url)
    error = await failure(model, request("x"))
    assert error.retryable and "the stream is broken" in str(error)
    error = await failure(model, request("x"))
    assert not error.retryable and "expected an event stream" in str(error)
    error = await failure(model, request("x"))  # an error body with 200 still classifies by its type
    assert (error.retryable, error.status) == (True, 529)


# --- cancellation and clients ------------------------------------------------------------------------------------


async def test_cancelling_closes_the_http_stream(server: AnthropicServer) -> None:
    server.script(text_response("one two three four five six seven eight nine ten " * 20, delay=0.05))
    model = AnthropicModel("claude-test", base_url=server.base_url)
    seen: list[ModelEvent] = []
    two_seen = asyncio.Event()

    async def consume() -> None:
        async for event in model.stream(request("x")):
            seen.append(event)
            if len(seen) == 2:
                two_seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(two_seen.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(server.requests[0].disconnected.wait(), 2)
    assert len(seen) < 10


async def test_closing_the_generator_closes_a_shared_clients_stream(server: AnthropicServer) -> None:
    server.script([text_response("a b c d e f g h", delay=0.2), text_response("after")])
    async with httpx.AsyncClient() as client:
        model = AnthropicModel("claude-test", base_url=server.base_url, http_client=client)
        events = model.stream(request("x"))
        assert await anext(events) == TextDelta(text="a")
        await events.aclose()  # type: ignore[attr-defined]
        await asyncio.wait_for(server.requests[0].disconnected.wait(), 2)
        # The shared client stays usable (and open) for the next call.
        assert text_of(await collect(model, request("y"))) == "after"
        assert not client.is_closed


async def test_shared_client_keeps_its_connection_between_calls(server: AnthropicServer) -> None:
    server.script([text_response("one"), text_response("two")])
    async with httpx.AsyncClient() as client:
        model = AnthropicModel("claude-test", base_url=server.base_url, http_client=client)
        assert text_of(await collect(model, request("x"))) == "one"
        assert text_of(await collect(model, request("y"))) == "two"
        assert not server.requests[0].disconnected.is_set()  # one kept-alive connection served both


# --- construction ------------------------------------------------------------------------------------------------


def test_model_strings_and_base_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    model = from_model_string("anthropic/claude-sonnet-4-5", read_timeout=5)
    assert (model.provider, model.model_id, model.timeout.read) == ("anthropic", "claude-sonnet-4-5", 5)
    assert model.messages_url == "https://api.anthropic.com/v1/messages"
    assert anthropic("anthropic/claude-x").model_id == anthropic("claude-x").model_id == "claude-x"
    for bad in ("openai/gpt-5", "anthropic/", "claude-x"):
        with pytest.raises(ConfigurationError) as caught:
            from_model_string(bad)
        assert caught.value.code == "MODEL_STRING_INVALID" and "anthropic/<model>" in str(caught.value)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://proxy.example/v1/")
    assert anthropic("claude-x").messages_url == "https://proxy.example/v1/messages"
    assert anthropic("claude-x", base_url="http://h:1").messages_url == "http://h:1/v1/messages"


async def test_base_url_from_environment(server: AnthropicServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    server.script(tool_use_response(("get_weather", {"city": "Rome"}), text="Sure."))
    events = await collect(anthropic("claude-test"), request("x", tools=[WEATHER]))
    calls = [event for event in events if isinstance(event, ToolCallEvent)]
    assert [json.loads(call.args_text) for call in calls] == [{"city": "Rome"}]
    assert server.requests[0].path == "/v1/messages"


# --- damaged streams and message wording -------------------------------------------------------------------------


async def test_a_truncated_event_is_a_retryable_broken_stream(server: AnthropicServer) -> None:
    server.script(MessageStream().text(["The", " answer", " is"]).cut(-3, keep=60).finish().build())
    events: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in AnthropicModel("claude-test", base_url=server.base_url).stream(request("x")):
            events.append(event)
    damaged = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " answer"}}
    line = "data: " + json.dumps(damaged, separators=(",", ":"))[:60]
    assert text_of(events) == "The"
    assert caught.value.message == (
        f"anthropic/claude-test: the stream is broken: a content_block_delta event is not JSON: {line!r}; "
        "a later attempt may succeed"
    )
    assert (caught.value.retryable, caught.value.status) == (True, None)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


async def test_a_connection_dropped_mid_tool_input_is_retryable_and_unchained(server: AnthropicServer) -> None:
    stream = MessageStream().tool_use("get_weather", '{"city": "Reykjavik"}', id="toulu_1", chunks=['{"ci', 'ty": "Re'])
    stream.items.pop()  # no content_block_stop: the connection drops while the input is still streaming
    server.script(stream.drop().build())
    model = AnthropicModel("claude-test", base_url=server.base_url)
    events: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in model.stream(request("x", tools=[WEATHER])):
            events.append(event)
    assert [type(event) for event in events] == [ToolInputStart, ToolInputDelta, ToolInputDelta]
    assert caught.value.message == (
        f"anthropic/claude-test: connection to {server.base_url} failed or was dropped (RemoteProtocolError: peer "
        "closed connection without sending complete message body (incomplete chunked read)); "
        "a later attempt may succeed"
    )
    assert caught.value.retryable
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.mark.parametrize(
    ("reply", "retryable", "expected"),
    [
        (
            error_response(429, "rate_limit_error", "Number of requests exceeded."),
            True,
            "HTTP 429 rate_limit_error: Number of requests exceeded (request-id {id}); rate limited; "
            "a later attempt may succeed",
        ),
        (
            error_response(408, "timeout_error", "Request timed out."),
            True,
            "HTTP 408 timeout_error: Request timed out (request-id {id}); "
            "the server timed out waiting for the request; a later attempt may succeed",
        ),
        (
            error_response(409, "api_error", "Conflict."),
            True,
            "HTTP 409 api_error: Conflict (request-id {id}); the server reported a conflict; "
            "a later attempt may succeed",
        ),
        (
            error_response(500, "api_error", "Internal error.", headers={"x-should-retry": "false"}),
            False,
            "HTTP 500 api_error: Internal error (request-id {id}); server error; retrying will not help",
        ),
        (
            error_response(400, "invalid_request_error", "messages: roles must alternate."),
            False,
            "HTTP 400 invalid_request_error: messages: roles must alternate (request-id {id}); "
            "fix the request (messages, tools or settings); retrying will not help",
        ),
    ],
    ids=["429", "408", "409", "500-should-not-retry", "400"],
)
async def test_status_messages_read_well(
    server: AnthropicServer, reply: JSONResponse, retryable: bool, expected: str
) -> None:
    server.script(reply)
    error = await failure(AnthropicModel("claude-test", base_url=server.base_url), request("x"))
    assert error.message == "anthropic/claude-test: " + expected.format(id="req_test0000000000000001")
    assert error.retryable is retryable
    assert "retried" not in error.message


async def test_error_event_wording(server: AnthropicServer) -> None:
    server.script(MessageStream().text("partial").error("overloaded_error", "Overloaded.").build())
    error = await failure(AnthropicModel("claude-test", base_url=server.base_url), request("x"))
    assert error.message == (
        "anthropic/claude-test: error event mid-stream: overloaded_error: Overloaded; a later attempt may succeed"
    )
