"""The OpenAI-compatible adapter against a real local HTTP server speaking OpenAI's streaming wire format."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest

from tempo_agents.errors import ConfigurationError, ModelError
from tempo_agents.models.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tempo_agents.models.model import (
    FinishEvent,
    Model,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallEvent,
    ToolChoice,
    ToolChoiceTool,
    ToolDefinition,
    ToolInputDelta,
    ToolInputEnd,
    ToolInputStart,
    ToolResultEvent,
)
from tempo_agents.models.openai_compatible import (
    DEFAULT_OPENAI_BASE_URL,
    WEB_SEARCH_UNSUPPORTED_PROVIDER,
    OpenAICompatibleModel,
    from_model_string,
    local_model,
    openai_compatible,
    web_search_unsupported,
)
from tempo_agents.models.usage import Usage
from tests.support.provider_servers.openai_server import (
    DONE,
    LLAMA_CPP_CONTENT_ERROR,
    Cut,
    Drop,
    OpenAIServer,
    Raw,
    RecordedRequest,
    Reply,
    Sleep,
    Stall,
    ToolCallSpec,
    chunk,
    dropped_after,
    error_event,
    error_reply,
    function_call_stream,
    json_reply,
    text_stream,
    tool_calls_stream,
)

pytestmark = pytest.mark.timeout(20)

KEY_ENV = "TEMPO_TEST_OPENAI_KEY"
WEATHER = ToolDefinition(
    name="get_weather",
    description="Weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
SEARCH = ToolDefinition(name="web_search", description="Search the web", input_schema={}, kind="web_search")


@pytest.fixture
async def server() -> AsyncIterator[OpenAIServer]:
    async with OpenAIServer() as running:
        yield running


@pytest.fixture
def model(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> OpenAICompatibleModel:
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    return openai_compatible("gpt-test", base_url=server.base_url, api_key_env=KEY_ENV, read_timeout=5)


def make_request(
    messages: Sequence[Message] | None = None,
    *,
    tools: Sequence[ToolDefinition] = (),
    tool_choice: ToolChoice = "auto",
    settings: dict[str, Any] | None = None,
    step: int = 0,
) -> ModelRequest:
    return ModelRequest(
        run_id="run-1",
        step=step,
        messages=list(messages or [Message(role="user", content=[TextPart(text="Hi")])]),
        tools=list(tools),
        tool_choice=tool_choice,
        settings=settings or {},
    )


async def collect(model: Model, request: ModelRequest) -> list[ModelEvent]:
    return [event async for event in model.stream(request)]


async def collect_until_error(model: Model, request: ModelRequest) -> tuple[list[ModelEvent], ModelError]:
    events: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in model.stream(request):
            events.append(event)
    return events, caught.value


# -- streaming ------------------------------------------------------------------------------------


async def test_text_stream_yields_deltas_then_finish_with_usage(
    server: OpenAIServer, model: OpenAICompatibleModel
) -> None:
    server.script(text_stream(["Hel", "lo", ", world"], usage=(11, 3)))
    events = await collect(model, make_request())
    assert events == [
        TextDelta(text="Hel"),
        TextDelta(text="lo"),
        TextDelta(text=", world"),
        FinishEvent(finish_reason="stop", usage=Usage(input_tokens=11, output_tokens=3, total_tokens=14)),
    ]
    sent = server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == "Bearer sk-test-123"
    assert sent.json["stream"] is True
    assert sent.json["stream_options"] == {"include_usage": True}
    assert sent.completed


async def test_several_tool_calls_with_interleaved_fragments(
    server: OpenAIServer, model: OpenAICompatibleModel
) -> None:
    calls = [
        ToolCallSpec("get_weather", {"city": "Paris"}, id="call_a"),
        ToolCallSpec("get_weather", {"city": "Reykjavík, Iceland"}, id="call_b"),
        ToolCallSpec("lookup", "{}", id="call_c"),
    ]
    server.script(tool_calls_stream(calls, text="Checking ", fragment_size=3, usage=(40, 21)))
    events = await collect(model, make_request(tools=[WEATHER]))

    assert events[0] == TextDelta(text="Checking ")
    starts = [e for e in events if isinstance(e, ToolInputStart)]
    assert [(e.tool_call_id, e.tool_name) for e in starts] == [
        ("call_a", "get_weather"),
        ("call_b", "get_weather"),
        ("call_c", "lookup"),
    ]
    # Fragments really were interleaved on the wire, and each call's deltas add up to its arguments.
    delta_ids = [e.tool_call_id for e in events if isinstance(e, ToolInputDelta)]
    assert delta_ids[:3] == ["call_a", "call_b", "call_c"]
    for spec in calls:
        text = "".join(e.args_text_delta for e in events if isinstance(e, ToolInputDelta) and e.tool_call_id == spec.id)
        assert json.loads(text) == (json.loads(spec.arguments) if isinstance(spec.arguments, str) else spec.arguments)

    # End and ToolCallEvent for each call after all fragments; FinishEvent last.
    tail = events[-7:]
    assert [type(e) for e in tail] == [ToolInputEnd, ToolCallEvent] * 3 + [FinishEvent]
    completed = [e for e in tail if isinstance(e, ToolCallEvent)]
    assert [json.loads(e.args_text) for e in completed] == [
        {"city": "Paris"},
        {"city": "Reykjavík, Iceland"},
        {},
    ]
    assert all(not e.provider_executed for e in completed)
    assert tail[-1] == FinishEvent(
        finish_reason="tool-calls", usage=Usage(input_tokens=40, output_tokens=21, total_tokens=61)
    )
    # every start precedes its deltas, every delta precedes its end
    for spec in calls:
        positions = [i for i, e in enumerate(events) if getattr(e, "tool_call_id", None) == spec.id]
        assert isinstance(events[positions[0]], ToolInputStart)
        assert isinstance(events[positions[-2]], ToolInputEnd)


async def test_tool_calls_without_ids_get_step_stable_ids(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    server.script(tool_calls_stream([ToolCallSpec("a", {"n": 1}), ToolCallSpec("b", {"n": 2})], include_ids=False))
    events = await collect(model, make_request(step=4))
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.tool_call_id, c.tool_name, json.loads(c.args_text)) for c in calls] == [
        ("call_4_0", "a", {"n": 1}),
        ("call_4_1", "b", {"n": 2}),
    ]


@pytest.mark.parametrize(
    ("wire", "ours"),
    [("stop", "stop"), ("length", "length"), ("content_filter", "content-filter"), ("surprise", "other")],
)
async def test_finish_reason_mapping(server: OpenAIServer, model: OpenAICompatibleModel, wire: str, ours: str) -> None:
    server.script(text_stream("Hi", finish_reason=wire))
    events = await collect(model, make_request())
    assert isinstance(events[-1], FinishEvent)
    assert events[-1].finish_reason == ours


async def test_sse_framing_comments_and_stream_without_done(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    server.script(
        text_stream("a"),  # to check the connection is reused afterwards
        # OpenRouter-style keep-alive comment, CRLF framing, then an end of body with no [DONE]
        text_reply_raw(
            [
                b": OPENROUTER PROCESSING\n\n",
                b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\r\n\r\n',
                b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":'
                b'{"prompt_tokens":2,"completion_tokens":1}}\n\n',
            ]
        ),
    )
    await collect(model, make_request())
    events = await collect(model, make_request())
    assert events == [
        TextDelta(text="x"),
        FinishEvent(finish_reason="stop", usage=Usage(input_tokens=2, output_tokens=1, total_tokens=3)),
    ]
    assert server.connections_opened == 1


def text_reply_raw(pieces: list[bytes]) -> Reply:
    return Reply(events=[Raw(piece) for piece in pieces])


async def test_non_streamed_json_answer_is_accepted(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Sure.",
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}],
                },
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9},
    }
    server.script(json_reply(completion))
    events = await collect(model, make_request())
    assert events == [
        TextDelta(text="Sure."),
        ToolInputStart(tool_call_id="c1", tool_name="f"),
        ToolInputDelta(tool_call_id="c1", args_text_delta='{"a":1}'),
        ToolInputEnd(tool_call_id="c1"),
        ToolCallEvent(tool_call_id="c1", tool_name="f", args_text='{"a":1}'),
        FinishEvent(finish_reason="tool-calls", usage=Usage(input_tokens=5, output_tokens=4, total_tokens=9)),
    ]


# -- request mapping ------------------------------------------------------------------------------


async def test_request_mapping_messages_tools_choice_and_settings(
    server: OpenAIServer, model: OpenAICompatibleModel
) -> None:
    messages = [
        Message(role="system", content=[TextPart(text="Be brief.")]),
        Message(role="user", content=[TextPart(text="Weather in Paris and Rome?")]),
        Message(
            role="assistant",
            content=[
                TextPart(text="Looking."),
                ToolCallPart(tool_call_id="c1", tool_name="get_weather", args={"city": "Paris"}),
                ToolCallPart(tool_call_id="c2", tool_name="get_weather", args={"city": "Rome"}),
            ],
        ),
        Message(
            role="tool",
            content=[
                ToolResultPart(tool_call_id="c1", tool_name="get_weather", result={"temp": 21, "sky": "clear"}),
                ToolResultPart(tool_call_id="c2", tool_name="get_weather", result="unavailable", is_error=True),
            ],
        ),
        Message(role="assistant", content=[ToolCallPart(tool_call_id="c3", tool_name="get_weather", args=None)]),
        # every call needs its result, as OpenAI refuses a transcript without one (and the test server does too)
        Message(role="tool", content=[ToolResultPart(tool_call_id="c3", tool_name="get_weather", result="ok")]),
    ]
    settings = {
        "temperature": 0.2,
        "max_tokens": 256,
        "top_p": 0.9,
        "stop": ["END"],
        "seed": 7,
        "provider_options": {"parallel_tool_calls": False, "user": "u-1"},
        "unknown_setting": "ignored",
    }
    server.script(text_stream("ok"))
    await collect(
        model,
        make_request(messages, tools=[WEATHER], tool_choice=ToolChoiceTool(tool_name="get_weather"), settings=settings),
    )
    body = server.requests[0].json
    assert body["model"] == "gpt-test"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
                {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 21, "sky": "clear"}'},
        {"role": "tool", "tool_call_id": "c2", "content": "unavailable"},
        {
            "role": "assistant",
            "content": "",  # not null: llama.cpp and LM Studio reject null content
            "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "ok"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": WEATHER.input_schema,
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert {k: body[k] for k in ("temperature", "max_tokens", "top_p", "stop", "seed")} == {
        "temperature": 0.2,
        "max_tokens": 256,
        "top_p": 0.9,
        "stop": ["END"],
        "seed": 7,
    }
    assert body["parallel_tool_calls"] is False
    assert body["user"] == "u-1"
    assert "unknown_setting" not in body
    assert "web_search_options" not in body


@pytest.mark.parametrize(
    ("choice", "expected"),
    [("auto", None), ("none", "none"), ("required", "required"), (ToolChoiceTool(tool_name="nope"), None)],
)
def test_tool_choice_mapping(choice: ToolChoice, expected: Any) -> None:
    model = openai_compatible("m", base_url="http://localhost:1/v1", api_key_env=None)
    body = model.build_body(make_request(tools=[WEATHER], tool_choice=choice))
    assert body.get("tool_choice") == expected
    # without tools there are no tools and no tool_choice on the wire
    bare = model.build_body(make_request(tool_choice=choice))
    assert "tools" not in bare
    assert "tool_choice" not in bare


def test_max_tokens_is_max_completion_tokens_for_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    body = from_model_string("openai/gpt-4o").build_body(make_request(settings={"maxTokens": 99, "topP": 0.5}))
    assert body["max_completion_tokens"] == 99
    assert body["top_p"] == 0.5
    assert "max_tokens" not in body


def test_provider_options_must_be_a_dict() -> None:
    model = openai_compatible("m", base_url="http://localhost:1/v1", api_key_env=None)
    with pytest.raises(ConfigurationError, match="provider_options"):
        model.build_body(make_request(settings={"provider_options": ["x"]}))


# -- keys, model strings, configuration -----------------------------------------------------------


async def test_no_api_key_env_sends_no_authorization(server: OpenAIServer) -> None:
    local = openai_compatible("llama3.1", base_url=server.base_url, api_key_env=None, headers={"X-Extra": "1"})
    server.script(text_stream("ok"))
    await collect(local, make_request())
    headers = server.requests[0].headers
    assert "authorization" not in headers
    assert headers["x-extra"] == "1"
    assert local.provider == "openai-compatible"
    assert local.model_id == "llama3.1"


async def test_missing_key_is_not_retryable_and_names_the_variable(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "")
    model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=KEY_ENV, provider="vllm")
    _, error = await collect_until_error(model, make_request())
    assert error.retryable is False
    assert KEY_ENV in error.message
    assert "vllm" in error.message
    assert "gpt-test" in error.message
    assert "api_key_env=None" in error.message
    assert (error.provider, error.model, error.status) == ("vllm", "gpt-test", None)
    assert server.requests == []


async def test_from_model_string_reads_base_url_and_key_at_call_time(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = from_model_string("openai/gpt-4o-mini")
    assert (model.provider, model.model_id, model.api_key_env) == ("openai", "gpt-4o-mini", "OPENAI_API_KEY")
    assert model.base_url == DEFAULT_OPENAI_BASE_URL

    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    server.script(text_stream("hi"))
    await collect(model, make_request())
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env"
    assert server.requests[0].json["model"] == "gpt-4o-mini"
    assert "sk-from-env" not in server.requests[0].raw_body.decode()


@pytest.mark.parametrize("spec", ["anthropic/claude", "openai/", "gpt-4o"])
def test_from_model_string_rejects_other_strings(spec: str) -> None:
    with pytest.raises(ConfigurationError):
        from_model_string(spec)


def test_bad_base_url_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="not an http"):
        openai_compatible("m", base_url="localhost:11434")


def test_satisfies_the_model_protocol() -> None:
    assert isinstance(openai_compatible("m", base_url="http://localhost:1/v1"), Model)


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "retryable", "retry_after", "says"),
    [
        (error_reply(429, "Rate limit reached", code="rate_limit_exceeded", retry_after=7), True, 7.0, "Rate limit"),
        (error_reply(429, "You exceeded your quota", code="insufficient_quota"), False, None, "billing"),
        (error_reply(500, "The server had an error"), True, None, "a later attempt may succeed"),
        (error_reply(503, "overloaded", retry_after=2), True, 2.0, "overloaded"),
        (error_reply(400, "Invalid 'messages[0].content'"), False, None, "messages[0]"),
        (error_reply(401, "Incorrect API key provided", code="invalid_api_key"), False, None, KEY_ENV),
        (error_reply(403, "Project does not have access"), False, None, "not allowed"),
        (error_reply(404, "The model `gpt-test` does not exist", code="model_not_found"), False, None, "/v1"),
    ],
    ids=["429", "429-quota", "500", "503", "400", "401", "403", "404"],
)
async def test_http_errors_classify_themselves(
    server: OpenAIServer,
    model: OpenAICompatibleModel,
    reply: Reply,
    retryable: bool,
    retry_after: float | None,
    says: str,
) -> None:
    server.script(reply)
    events, error = await collect_until_error(model, make_request())
    assert events == []
    assert error.retryable is retryable
    assert error.status == reply.status
    assert error.retry_after == retry_after
    assert (error.provider, error.model) == ("openai-compatible", "gpt-test")
    assert says in error.message
    assert '"gpt-test"' in error.message
    assert f"HTTP {reply.status}" in error.message
    assert reply.body["error"]["message"] in error.message


async def test_ollama_style_string_error_body(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    server.script(Reply(status=404, body={"error": 'model "llama9" not found, try pulling it first'}))
    _, error = await collect_until_error(model, make_request())
    assert not error.retryable
    assert 'model "llama9" not found' in error.message


@pytest.mark.parametrize(
    ("event", "retryable"),
    [
        (error_event("The server had an error while processing your request."), True),
        (error_event("Overloaded", type="overloaded_error"), True),
        ({"error": {"message": "upstream failed", "code": 502}}, True),
        (error_event("This model's maximum context length is 8192 tokens", type="invalid_request_error"), False),
    ],
    ids=["server_error", "overloaded", "openrouter-502", "context-length"],
)
async def test_error_event_mid_stream(
    server: OpenAIServer, model: OpenAICompatibleModel, event: dict[str, Any], retryable: bool
) -> None:
    server.script(Reply(events=[chunk({"role": "assistant", "content": ""}), chunk({"content": "Par"}), event, DONE]))
    events, error = await collect_until_error(model, make_request())
    assert events == [TextDelta(text="Par")]
    assert error.retryable is retryable
    assert "mid-stream" in error.message
    assert event["error"]["message"].rstrip(".") in error.message
    assert ".." not in error.message


async def test_stalled_stream_is_a_retryable_timeout(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "k")
    model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=KEY_ENV, read_timeout=0.3)
    server.script(Reply(events=[chunk({"content": "Hello"}), Stall(10)]))
    events, error = await collect_until_error(model, make_request())
    assert events == [TextDelta(text="Hello")]
    assert error.retryable is True
    assert "stalled" in error.message
    assert error.__cause__ is None and error.__suppress_context__  # no httpx chain for Temporal to serialise
    await asyncio.wait_for(server.requests[0].disconnected.wait(), 2)


async def test_slow_first_byte_is_a_retryable_timeout(server: OpenAIServer) -> None:
    model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None, read_timeout=0.2)
    reply = text_stream("late")
    reply.delay = 5
    server.script(reply)
    _, error = await collect_until_error(model, make_request())
    assert error.retryable is True


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
async def test_dropped_connection_is_retryable(server: OpenAIServer, model: OpenAICompatibleModel, reset: bool) -> None:
    server.script(Reply(events=[chunk({"content": "Hel"}), Drop(reset=reset)]))
    events, error = await collect_until_error(model, make_request())
    assert events == [TextDelta(text="Hel")]
    assert error.retryable is True
    assert error.status is None


async def test_body_ending_before_finish_is_retryable(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    # A complete chunked body, but the model never finished: the response is incomplete.
    server.script(Reply(events=[chunk({"content": "Hel"})]))
    events, error = await collect_until_error(model, make_request())
    assert events == [TextDelta(text="Hel")]
    assert error.retryable is True
    assert "before the response was complete" in error.message


async def test_connection_refused_is_retryable() -> None:
    async with OpenAIServer() as gone:
        base_url = gone.base_url
    model = openai_compatible("gpt-test", base_url=base_url, api_key_env=None)
    _, error = await collect_until_error(model, make_request())
    assert error.retryable is True
    assert "could not connect" in error.message


# -- cancellation ---------------------------------------------------------------------------------


async def test_closing_the_stream_closes_the_connection(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    server.script(text_stream(["t"] * 200, delay=0.02))
    stream = model.stream(make_request())
    first = [await anext(stream), await anext(stream)]
    assert first == [TextDelta(text="t"), TextDelta(text="t")]
    await stream.aclose()  # type: ignore[attr-defined]
    await asyncio.wait_for(server.requests[0].disconnected.wait(), 2)
    assert not server.requests[0].completed


async def test_cancelling_the_task_closes_the_connection(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    server.script(text_stream(["t"] * 200, delay=0.02))
    received = asyncio.Event()

    async def consume() -> None:
        async for _ in model.stream(make_request()):
            received.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(received.wait(), 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(server.requests[0].disconnected.wait(), 2)
    assert not server.requests[0].completed


# -- web search -----------------------------------------------------------------------------------


async def test_web_search_for_openai_maps_to_web_search_options(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    model = from_model_string("openai/gpt-4o-search-preview")
    citation = {
        "type": "url_citation",
        "url_citation": {"url": "https://example.org/a", "title": "A", "start_index": 0, "end_index": 4},
    }
    server.script(text_stream("News today.", annotations=[citation]))
    events = await collect(model, make_request(tools=[SEARCH]))

    body = server.requests[0].json
    assert body["web_search_options"] == {}
    assert "tools" not in body
    assert "tool_choice" not in body
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "News today."
    call, result, finish = events[-3:]
    assert isinstance(call, ToolCallEvent)
    assert (call.tool_name, call.args_text, call.provider_executed) == ("web_search", "{}", True)
    assert isinstance(result, ToolResultEvent)
    assert result.tool_call_id == call.tool_call_id
    assert result.result == {"sources": [{"type": "url", "url": "https://example.org/a", "title": "A"}]}
    assert isinstance(finish, FinishEvent)
    assert finish.finish_reason == "stop"


async def test_web_search_400_says_to_use_a_search_model(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    server.script(error_reply(400, "Unrecognized request argument supplied: web_search_options"))
    _, error = await collect_until_error(from_model_string("openai/gpt-4o"), make_request(tools=[SEARCH, WEATHER]))
    assert not error.retryable
    assert "gpt-4o-search-preview" in error.message
    assert server.requests[0].json["tools"][0]["function"]["name"] == "get_weather"


async def test_web_search_on_other_providers_is_unsupported(server: OpenAIServer) -> None:
    model = openai_compatible("llama3.1", base_url=server.base_url, api_key_env=None, provider="ollama")
    with pytest.raises(ConfigurationError) as caught:
        await collect(model, make_request(tools=[SEARCH]))
    assert caught.value.code == WEB_SEARCH_UNSUPPORTED_PROVIDER
    assert caught.value.message == (
        "The built-in webSearchTool supports OpenAI, Anthropic, Google, and xAI models. "
        'Could not infer a supported provider from "ollama".'
    )
    assert server.requests == []
    shared = web_search_unsupported("mistral")
    assert shared.code == WEB_SEARCH_UNSUPPORTED_PROVIDER
    assert '"mistral"' in shared.message


# -- the server helper itself ---------------------------------------------------------------------


async def test_server_handler_and_paced_tokens(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    seen: list[str] = []

    def handler(request: RecordedRequest) -> Reply:
        seen.append(request.json["messages"][-1]["content"])
        return text_stream(f"echo {seen[-1]}", delay=0.01)

    server.respond_with(handler)
    loop = asyncio.get_running_loop()
    started = loop.time()
    events = await collect(model, make_request([Message(role="user", content=[TextPart(text="ping")])]))
    assert loop.time() - started >= 0.02
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "echo ping"
    assert seen == ["ping"]
    assert server.pending == 0
    server.respond_with(None)
    server.script(Reply(events=[Sleep(0.01), chunk({"content": "x"}, finish_reason="stop"), DONE]))
    await collect(model, make_request())
    _, error = await collect_until_error(model, make_request())
    assert "no scripted reply left" in error.message


# -- local servers and damaged streams ------------------------------------------------------------

TOOL_CALL_HISTORY = [
    Message(role="user", content=[TextPart(text="Weather in Paris?")]),
    Message(
        role="assistant", content=[ToolCallPart(tool_call_id="c1", tool_name="get_weather", args={"city": "Paris"})]
    ),
    Message(role="tool", content=[ToolResultPart(tool_call_id="c1", tool_name="get_weather", result={"sky": "clear"})]),
]


def where(server: OpenAIServer, model_name: str = "gpt-test", provider: str = "openai-compatible") -> str:
    """How error messages name a model on ``server``."""
    return f'{provider} model "{model_name}" at {server.base_url}/chat/completions'


async def test_llama_cpp_dialect_refuses_null_content_like_llama_cpp() -> None:
    async with OpenAIServer(dialect="llama.cpp") as server:
        server.script(text_stream("unused"))
        body = {
            "model": "m",
            "stream": True,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": []},
            ],
        }
        async with httpx.AsyncClient() as client:
            response = await client.post(f"{server.base_url}/chat/completions", json=body)
        assert response.status_code == 500
        assert response.json()["error"]["message"].startswith(LLAMA_CPP_CONTENT_ERROR)
        assert response.json()["error"]["type"] == "server_error"
        assert len(server.rejected) == 1
        assert server.pending == 1


async def test_tool_call_history_is_accepted_by_a_llama_cpp_server() -> None:
    async with OpenAIServer(dialect="llama.cpp") as server:
        model = openai_compatible("qwen2.5", base_url=server.base_url, api_key_env=None, provider="llama.cpp")
        server.script(text_stream("It is clear."))
        events = await collect(model, make_request(TOOL_CALL_HISTORY, tools=[WEATHER]))
    assert server.rejected == []
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "It is clear."
    assistant = server.requests[0].json["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
        ],
    }


async def test_a_servers_long_error_is_quoted_briefly(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    conversation = json.dumps([{"role": "user", "content": "x" * 400}] * 20, indent=2)
    server.script(error_reply(500, LLAMA_CPP_CONTENT_ERROR + conversation))
    _, error = await collect_until_error(model, make_request())
    quoted = " ".join((LLAMA_CPP_CONTENT_ERROR + conversation).split())[:299]
    assert error.message == (
        f"{where(server)}: HTTP 500 Internal Server Error: {quoted}…. "
        "The server failed or is overloaded; a later attempt may succeed."
    )
    assert error.retryable is True


async def test_repeated_call_headers_and_legacy_function_call_make_one_call(
    server: OpenAIServer, model: OpenAICompatibleModel
) -> None:
    server.script(
        tool_calls_stream(
            [ToolCallSpec("get_weather", {"city": "Paris"}, id="call_p")],
            fragment_size=6,
            repeat_header=True,
            legacy_function_call=True,
        )
    )
    events = await collect(model, make_request(tools=[WEATHER]))
    assert events == [
        ToolInputStart(tool_call_id="call_p", tool_name="get_weather"),
        ToolInputDelta(tool_call_id="call_p", args_text_delta='{"city'),
        ToolInputDelta(tool_call_id="call_p", args_text_delta='": "Pa'),
        ToolInputDelta(tool_call_id="call_p", args_text_delta='ris"}'),
        ToolInputEnd(tool_call_id="call_p"),
        ToolCallEvent(tool_call_id="call_p", tool_name="get_weather", args_text='{"city": "Paris"}'),
        FinishEvent(finish_reason="tool-calls", usage=Usage(input_tokens=30, output_tokens=18, total_tokens=48)),
    ]
    # The quirks really were on the wire.
    raw = server.requests[0]
    assert raw.completed


async def test_a_call_in_the_legacy_function_call_field_alone_is_a_tool_call(
    server: OpenAIServer, model: OpenAICompatibleModel
) -> None:
    server.script(function_call_stream("get_weather", {"city": "Oslo"}, fragment_size=8))
    events = await collect(model, make_request(tools=[WEATHER], step=3))
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [ToolCallEvent(tool_call_id="call_3_0", tool_name="get_weather", args_text='{"city": "Oslo"}')]
    assert isinstance(events[-1], FinishEvent)
    assert events[-1].finish_reason == "tool-calls"


async def test_a_truncated_json_event_is_a_retryable_broken_stream(
    server: OpenAIServer, model: OpenAICompatibleModel
) -> None:
    # Envelope fields given in the server's order, so the damaged line is known byte for byte.
    envelope = {
        "id": "chatcmpl-9",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "gpt-test",
        "service_tier": "default",
        "system_fingerprint": "fp_tempo",
    }
    damaged = {**envelope, **chunk({"content": " answer"})}
    server.script(
        Reply(
            events=[
                chunk({"content": "The"}),
                Cut(damaged, keep=150),
                chunk({"content": " is"}),
                chunk({}, finish_reason="stop"),
                DONE,
            ]
        )
    )
    events, error = await collect_until_error(model, make_request())
    assert events == [TextDelta(text="The")]
    line = "data: " + json.dumps(damaged, separators=(",", ":"))
    assert error.message == (
        f"{where(server)}: the stream is broken: an event is not JSON: {line[:100]!r}…; a later attempt may succeed."
    )
    assert error.retryable is True
    assert error.status is None


async def test_a_connection_dropped_mid_tool_call_arguments_is_retryable_and_unchained(
    server: OpenAIServer, model: OpenAICompatibleModel
) -> None:
    whole = tool_calls_stream([ToolCallSpec("get_weather", {"city": "Reykjavik"}, id="call_r")], fragment_size=4)
    server.script(dropped_after(whole, 4))
    events, error = await collect_until_error(model, make_request(tools=[WEATHER]))
    assert events == [
        ToolInputStart(tool_call_id="call_r", tool_name="get_weather"),
        ToolInputDelta(tool_call_id="call_r", args_text_delta='{"ci'),
        ToolInputDelta(tool_call_id="call_r", args_text_delta='ty":'),
    ]
    assert error.message == (
        f"{where(server)}: the connection dropped (peer closed connection without sending complete message body "
        "(incomplete chunked read)); a later attempt may succeed."
    )
    assert error.retryable is True
    assert error.__cause__ is None and error.__suppress_context__


def test_max_tokens_name_follows_the_server_not_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = {"max_tokens": 64}
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8080/v1")
    local_openai = from_model_string("openai/qwen2.5").build_body(make_request(settings=settings))
    assert (local_openai.get("max_tokens"), "max_completion_tokens" in local_openai) == (64, False)
    labelled_compatible = openai_compatible("gpt-4o", base_url="https://api.openai.com/v1", api_key_env=None)
    body = labelled_compatible.build_body(make_request(settings=settings))
    assert (body.get("max_completion_tokens"), "max_tokens" in body) == (64, False)


async def test_openai_prefix_on_another_server_sends_max_tokens(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    server.script(text_stream("ok"))
    await collect(from_model_string("openai/llama3.1"), make_request(settings={"maxOutputTokens": 32}))
    sent = server.requests[0].json
    assert sent["max_tokens"] == 32
    assert "max_completion_tokens" not in sent


@pytest.mark.parametrize(
    ("reply", "retryable", "expected"),
    [
        (
            error_reply(429, "Rate limit exceeded."),
            True,
            "HTTP 429 Too Many Requests: Rate limit exceeded. Rate limited by the server; a later attempt may succeed.",
        ),
        (
            error_reply(529, "Overloaded"),
            True,
            "HTTP 529: Overloaded. The server failed or is overloaded; a later attempt may succeed.",
        ),
        (
            error_reply(408, "Request timed out."),
            True,
            "HTTP 408 Request Timeout: Request timed out. "
            "The server timed out waiting for the request; a later attempt may succeed.",
        ),
        (
            error_reply(409, "Another request is in progress."),
            True,
            "HTTP 409 Conflict: Another request is in progress. "
            "The server reported a conflict; a later attempt may succeed.",
        ),
        (
            error_reply(400, "Invalid value for 'temperature'."),
            False,
            "HTTP 400 Bad Request: Invalid value for 'temperature'. "
            "The request was rejected; check the messages, tools and model settings.",
        ),
    ],
    ids=["429", "529-no-reason-phrase", "408", "409", "400"],
)
async def test_status_messages_read_well(
    server: OpenAIServer, model: OpenAICompatibleModel, reply: Reply, retryable: bool, expected: str
) -> None:
    server.script(reply)
    _, error = await collect_until_error(model, make_request())
    assert error.message == f"{where(server)}: {expected}"
    assert error.retryable is retryable


async def test_key_variable_names_keep_their_case(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    server.script(error_reply(403, "Project does not have access to model gpt-4o."))
    _, error = await collect_until_error(from_model_string("openai/gpt-4o"), make_request())
    assert error.message == (
        f"{where(server, 'gpt-4o', 'openai')}: HTTP 403 Forbidden: Project does not have access to model gpt-4o. "
        "The API key in OPENAI_API_KEY is not allowed to use model 'gpt-4o' (or this endpoint)."
    )


async def test_no_error_claims_the_step_is_retried(server: OpenAIServer, model: OpenAICompatibleModel) -> None:
    server.script(
        error_reply(503, "down"),
        Reply(events=[chunk({"content": "a"}), error_event("boom")]),
        Reply(events=[chunk({"content": "a"})]),
        Reply(events=[chunk({"content": "a"}), Drop()]),
    )
    messages = [(await collect_until_error(model, make_request()))[1].message for _ in range(4)]
    assert all("retried" not in message and "a later attempt may succeed" in message for message in messages)
    assert messages[1] == (
        f"{where(server)}: the server reported an error mid-stream: boom (a later attempt may succeed)."
    )
    assert messages[2] == (
        f"{where(server)}: the connection closed before the response was complete; a later attempt may succeed."
    )


def test_local_model_uses_the_servers_default_address_and_no_key() -> None:
    ollama = local_model("qwen2.5:7b", "ollama")
    assert (ollama.endpoint, ollama.api_key_env, ollama.provider) == (
        "http://localhost:11434/v1/chat/completions",
        None,
        "ollama",
    )
    elsewhere = local_model("m", "vllm", base_url="http://gpu:9000/v1", api_key_env="VLLM_API_KEY")
    assert (elsewhere.base_url, elsewhere.api_key_env, elsewhere.provider) == (
        "http://gpu:9000/v1",
        "VLLM_API_KEY",
        "vllm",
    )
    assert local_model("m", "llama.cpp").base_url == "http://localhost:8080/v1"
    with pytest.raises(ConfigurationError, match="unknown server 'tgi'"):
        local_model("m", "tgi")  # type: ignore[arg-type]


async def test_local_model_runs_against_a_server(server: OpenAIServer) -> None:
    server.script(text_stream("hi"))
    events = await collect(local_model("qwen2.5", "llama.cpp", base_url=server.base_url), make_request())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hi"
    assert "authorization" not in server.requests[0].headers
