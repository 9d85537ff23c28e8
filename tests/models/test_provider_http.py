"""The HTTP layer both provider adapters share: the event-stream decoder, ``Retry-After``, the pooled client.

Edge inputs go to the shared pieces directly; the adapters are then held to one behaviour against the real
local servers that speak their wire formats.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from email.utils import formatdate

import pytest

from tempo_agents.errors import ModelError
from tempo_agents.models.anthropic import AnthropicModel
from tempo_agents.models.messages import Message, TextPart
from tempo_agents.models.model import Model, ModelEvent, ModelRequest, TextDelta
from tempo_agents.models.openai_compatible import openai_compatible
from tempo_agents.models.provider_http import SSEDecoder, SSEEvent, pooled_client, retry_after_seconds
from tests.support.provider_servers.anthropic_server import AnthropicServer, error_response, text_response
from tests.support.provider_servers.openai_server import OpenAIServer, error_reply, text_stream

pytestmark = pytest.mark.timeout(20)

KEY_ENV = "TEMPO_TEST_PROVIDER_KEY"


def decode(lines: list[str], *, end: bool = False) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [event for line in lines if (event := decoder.feed(line)) is not None]
    if end and (last := decoder.end()) is not None:
        events.append(last)
    return events


# --- the event-stream decoder ------------------------------------------------------------------------------------


def test_an_event_is_its_data_lines_joined_and_its_event_name() -> None:
    lines = ["event: message_start", 'data: {"a":', "data: 1}", "", "data: [DONE]", ""]
    assert decode(lines) == [SSEEvent("message_start", '{"a":\n1}'), SSEEvent("", "[DONE]")]


def test_the_event_name_belongs_to_one_event_only() -> None:
    assert decode(["event: error", "data: x", "", "data: y", ""]) == [SSEEvent("error", "x"), SSEEvent("", "y")]


def test_comments_ids_retries_and_unknown_fields_are_read_past() -> None:
    lines = [": keep-alive", "id: 7", "retry: 1000", "foo: bar", "data: kept", ": another comment", ""]
    assert decode(lines) == [SSEEvent("", "kept")]


def test_only_one_space_after_the_colon_is_dropped() -> None:
    assert decode(["data:tight", "", "data:  two spaces", "", "data: trailing ", ""]) == [
        SSEEvent("", "tight"),
        SSEEvent("", " two spaces"),
        SSEEvent("", "trailing "),
    ]


def test_events_without_data_are_not_reported() -> None:
    # A blank line alone, an event name alone, an empty data line, a bare "data" field: nothing to decode.
    assert decode(["", "", "event: ping", "", "data:", "", "data", ""]) == []


def test_only_the_streams_first_line_loses_a_byte_order_mark() -> None:
    assert decode(["\ufeffdata: first", ""]) == [SSEEvent("", "first")]
    # Later, the mark is part of the field name, so the line is an unknown field.
    assert decode(["data: first", "", "\ufeffdata: later", ""]) == [SSEEvent("", "first")]


def test_the_lines_after_the_last_blank_line_are_an_event_only_when_asked_at_the_end() -> None:
    lines = ["data: whole", "", "event: last", "data: cut"]
    assert decode(lines) == [SSEEvent("", "whole")]
    assert decode(lines, end=True) == [SSEEvent("", "whole"), SSEEvent("last", "cut")]
    assert decode(["data: whole", ""], end=True) == [SSEEvent("", "whole")]


# --- Retry-After ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": " 3 "}, 3.0),
        ({"retry-after": "0"}, 0.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({}, None),
        ({"retry-after": ""}, None),
    ],
)
def test_retry_after_in_seconds_or_milliseconds(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(headers) == seconds


@pytest.mark.parametrize("value", ["-1", "-0.5", "inf", "Infinity", "-inf", "nan", "1e999", "soon", "7 seconds", "🙂"])
def test_a_negative_infinite_or_unreadable_retry_after_is_no_hint(value: str) -> None:
    assert retry_after_seconds({"retry-after": value}) is None


@pytest.mark.parametrize("value", ["-250", "inf", "nan", "later"])
def test_an_unusable_retry_after_ms_falls_back_to_retry_after(value: str) -> None:
    assert retry_after_seconds({"retry-after-ms": value, "retry-after": "4"}) == 4.0
    assert retry_after_seconds({"retry-after-ms": value}) is None


def test_retry_after_as_an_http_date() -> None:
    hour_ahead = formatdate(time.time() + 3600, usegmt=True)
    seconds = retry_after_seconds({"retry-after": hour_ahead})
    assert seconds is not None and 3500 < seconds <= 3600
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past: now
    assert retry_after_seconds({"retry-after": "Wed, 99 Foo 2015 07:28:00 GMT"}) is None


# --- the adapters over the shared layer ------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture
async def openai_server() -> AsyncIterator[OpenAIServer]:
    async with OpenAIServer() as running:
        yield running


@pytest.fixture
async def anthropic_server() -> AsyncIterator[AnthropicServer]:
    async with AnthropicServer() as running:
        yield running


def request() -> ModelRequest:
    return ModelRequest(run_id="run-1", step=0, messages=[Message(role="user", content=[TextPart(text="hi")])])


async def text(model: Model) -> str:
    events: list[ModelEvent] = [event async for event in model.stream(request())]
    return "".join(event.text for event in events if isinstance(event, TextDelta))


async def failure(model: Model) -> ModelError:
    with pytest.raises(ModelError) as caught:
        await text(model)
    return caught.value


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("7", 7.0), ("inf", None), ("-3", None), ("soon", None), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0)],
)
async def test_both_adapters_read_one_retry_after_the_same_way(
    openai_server: OpenAIServer, anthropic_server: AnthropicServer, value: str, seconds: float | None
) -> None:
    openai_server.script(error_reply(429, "Rate limit reached", headers={"retry-after": value}))
    anthropic_server.script(error_response(429, "rate_limit_error", "slow down", headers={"retry-after": value}))
    openai = openai_compatible("gpt-test", base_url=openai_server.base_url, api_key_env=KEY_ENV)
    claude = AnthropicModel("claude-test", base_url=anthropic_server.base_url, api_key_env=KEY_ENV)
    for error in (await failure(openai), await failure(claude)):
        assert (error.retryable, error.status, error.retry_after) == (True, 429, seconds)


async def test_models_without_a_client_share_one_kept_alive_connection_per_server(
    openai_server: OpenAIServer, anthropic_server: AnthropicServer
) -> None:
    openai_server.script(text_stream("one"), text_stream("two"))
    anthropic_server.script([text_response("three"), text_response("four")])
    first = openai_compatible("gpt-test", base_url=openai_server.base_url, api_key_env=KEY_ENV)
    second = openai_compatible("gpt-other", base_url=openai_server.base_url, api_key_env=KEY_ENV)
    claude = AnthropicModel("claude-test", base_url=anthropic_server.base_url, api_key_env=KEY_ENV)
    again = AnthropicModel("claude-other", base_url=anthropic_server.base_url, api_key_env=KEY_ENV)
    assert [await text(first), await text(second)] == ["one", "two"]
    assert [await text(claude), await text(again)] == ["three", "four"]
    assert openai_server.connections_opened == 1
    assert not anthropic_server.requests[0].disconnected.is_set()  # the second call came on the same connection
    assert anthropic_server.requests[1].headers["user-agent"] == openai_server.requests[1].headers["user-agent"]


async def test_the_pool_belongs_to_its_event_loop_and_is_made_again_once_closed() -> None:
    client = pooled_client()
    assert pooled_client() is client
    other_loop = await asyncio.to_thread(lambda: asyncio.run(_pooled_client_id()))
    assert other_loop != id(client)
    await client.aclose()
    fresh = pooled_client()
    assert fresh is not client and not fresh.is_closed


async def _pooled_client_id() -> int:
    client = pooled_client()
    await client.aclose()
    return id(client)
