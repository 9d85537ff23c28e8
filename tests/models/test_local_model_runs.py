"""Agent runs against servers that behave like local model servers and damaged provider streams.

Real Temporal dev server, real adapters, provider servers on 127.0.0.1: a llama.cpp-like server that refuses
``"content": null``, a server with unusual tool-call framing, a truncated JSON event, a connection dropped in
the middle of tool-call arguments and a stalled stream. A retried step must end with the whole answer, and the
failure Temporal records for the failed attempt must be the adapter's message (not "Failure exceeds size
limit.").
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from temporalio.api.failure.v1 import Failure
from temporalio.client import WorkflowHistory

from tempo_agents.client.app import App
from tempo_agents.models.anthropic import AnthropicModel
from tempo_agents.models.openai_compatible import openai_compatible
from tests.conftest import AppFactory, closed_history, running_worker
from tests.support.agents import weather_agent
from tests.support.provider_servers.anthropic_server import AnthropicServer, MessageStream, text_response
from tests.support.provider_servers.openai_server import (
    LLAMA_CPP_CONTENT_ERROR,
    Cut,
    OpenAIServer,
    Reply,
    Stall,
    ToolCallSpec,
    chunk,
    dropped_after,
    error_reply,
    text_stream,
    tool_calls_stream,
)

pytestmark = pytest.mark.timeout(60)

TEMPORAL_FAILURE_LIMIT = 4096
"""The server's default limit for a retried activity's last failure, in bytes."""


def where(server: OpenAIServer) -> str:
    return f'openai-compatible model "gpt-test" at {server.base_url}/chat/completions'


async def run_history(app: App, agent_id: str, prompt: str) -> tuple[Any, WorkflowHistory]:
    async with running_worker(app):
        result = await app.agent(agent_id).generate(prompt)
        history = await closed_history(app.client, result.run_id)
    return result, history


def retried_failures(history: WorkflowHistory) -> list[Failure]:
    """The last failure of every activity attempt that followed a failed one."""
    return [
        event.activity_task_started_event_attributes.last_failure
        for event in history.events
        if event.HasField("activity_task_started_event_attributes")
        and event.activity_task_started_event_attributes.attempt > 1
    ]


def assert_recorded(history: WorkflowHistory, message: str) -> None:
    """Temporal kept the adapter's message as the reason for the retry, small and without an httpx chain."""
    [failure] = retried_failures(history)
    assert failure.message == message
    assert failure.ByteSize() < TEMPORAL_FAILURE_LIMIT
    assert not failure.cause.HasField("cause")


async def test_a_tool_using_run_completes_on_a_llama_cpp_server(make_app: AppFactory) -> None:
    async with OpenAIServer(dialect="llama.cpp") as server:
        server.script(tool_calls_stream([ToolCallSpec("weather", {"city": "Oslo"})]), text_stream("Sunny in Oslo."))
        model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None, provider="llama.cpp")
        result, history = await run_history(make_app([weather_agent(model, "llama")]), "llama", "Oslo?")
    assert result.error is None
    assert (result.finish_reason, result.text) == ("stop", "Sunny in Oslo.")
    assert [r.payload.result for r in result.tool_results] == [{"city": "Oslo", "sky": "sunny"}]
    assert server.rejected == []
    assert retried_failures(history) == []
    assert server.requests[1].json["messages"][2]["content"] == ""


async def test_unusual_tool_call_framing_makes_one_call(make_app: AppFactory) -> None:
    async with OpenAIServer() as server:
        server.script(
            tool_calls_stream(
                [ToolCallSpec("weather", {"city": "Rome"}, id="call_rome")],
                repeat_header=True,
                legacy_function_call=True,
            ),
            text_stream("Sunny in Rome."),
        )
        model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None)
        result, _ = await run_history(make_app([weather_agent(model, "framing")]), "framing", "Rome?")
    assert result.text == "Sunny in Rome."
    assert [(r.payload.tool_call_id, r.payload.result) for r in result.tool_results] == [
        ("call_rome", {"city": "Rome", "sky": "sunny"})
    ]


async def test_a_truncated_event_is_retried_and_the_answer_is_whole(make_app: AppFactory) -> None:
    envelope = {
        "id": "chatcmpl-9",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "gpt-test",
        "service_tier": "default",
        "system_fingerprint": "fp_tempo",
    }
    damaged = {**envelope, **chunk({"content": " answer"})}
    async with OpenAIServer() as server:
        server.script(
            Reply(events=[chunk({"content": "The"}), Cut(damaged, keep=140), chunk({"content": " is 42."})]),
            text_stream(["The", " answer", " is 42."]),
        )
        model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None)
        result, history = await run_history(make_app([weather_agent(model, "damaged")]), "damaged", "?")
    assert (result.finish_reason, result.text) == ("stop", "The answer is 42.")
    # The attempt's "The" is dropped by the reset chunk (the result keeps what a client keeps), then the step is
    # streamed again.
    assert [c.type for c in result.chunks] == [
        "start",
        "step-start",
        "step-reset",
        "text-delta",
        "text-delta",
        "text-delta",
        "step-finish",
        "finish",
    ]
    line = "data: " + json.dumps(damaged, separators=(",", ":"))
    assert_recorded(
        history,
        f"{where(server)}: the stream is broken: an event is not JSON: {line[:100]!r}…; a later attempt may succeed.",
    )


async def test_a_connection_dropped_mid_tool_call_arguments_is_retried(make_app: AppFactory) -> None:
    call = tool_calls_stream([ToolCallSpec("weather", {"city": "Reykjavik"}, id="call_r")], fragment_size=4)
    async with OpenAIServer() as server:
        server.script(dropped_after(call, 4), call, text_stream("Cold."))
        model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None)
        result, history = await run_history(make_app([weather_agent(model, "dropped")]), "dropped", "Reykjavik?")
    assert (result.finish_reason, result.text) == ("stop", "Cold.")
    assert [r.payload.result for r in result.tool_results] == [{"city": "Reykjavik", "sky": "sunny"}]
    assert_recorded(
        history,
        f"{where(server)}: the connection dropped (peer closed connection without sending complete message body "
        "(incomplete chunked read)); a later attempt may succeed.",
    )


async def test_a_stalled_stream_is_retried_with_its_reason_recorded(make_app: AppFactory) -> None:
    async with OpenAIServer() as server:
        server.script(Reply(events=[chunk({"content": "Hel"}), Stall(10)]), text_stream("Hello."))
        model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None, read_timeout=0.5)
        result, history = await run_history(make_app([weather_agent(model, "stalled")]), "stalled", "hi")
    assert result.text == "Hello."
    assert_recorded(
        history, f"{where(server)}: no data from the server for 0.5s (stalled stream); a later attempt may succeed."
    )


async def test_a_truncated_anthropic_event_is_retried(make_app: AppFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    async with AnthropicServer() as server:
        server.script(
            [
                MessageStream().text(["The", " answer", " is 42."]).cut(-3, keep=60).finish().build(),
                text_response(["The", " answer", " is 42."]),
            ]
        )
        model = AnthropicModel("claude-test", base_url=server.base_url)
        result, history = await run_history(make_app([weather_agent(model, "claude")]), "claude", "?")
    assert (result.finish_reason, result.text) == ("stop", "The answer is 42.")
    damaged = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " answer"}}
    line = "data: " + json.dumps(damaged, separators=(",", ":"))[:60]
    assert_recorded(
        history,
        f"anthropic/claude-test: the stream is broken: a content_block_delta event is not JSON: {line!r}; "
        "a later attempt may succeed",
    )


async def test_a_long_server_error_is_recorded_in_full_within_the_limit(make_app: AppFactory) -> None:
    # llama.cpp's 500 quotes the whole conversation back; the recorded failure must still fit and say why.
    conversation = json.dumps([{"role": "user", "content": "y" * 500}] * 40, indent=2)
    async with OpenAIServer() as server:
        server.script(error_reply(500, LLAMA_CPP_CONTENT_ERROR + conversation), text_stream("Recovered."))
        model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None)
        result, history = await run_history(make_app([weather_agent(model, "verbose")]), "verbose", "hi")
    assert result.text == "Recovered."
    quoted = " ".join((LLAMA_CPP_CONTENT_ERROR + conversation).split())[:299]
    assert_recorded(
        history,
        f"{where(server)}: HTTP 500 Internal Server Error: {quoted}…. "
        "The server failed or is overloaded; a later attempt may succeed.",
    )
