"""A model step that fails after streaming: clients drop exactly what the failed attempt wrote.

Against a provider server on 127.0.0.1 that drops the connection in the middle of a tool call's
arguments and, like real models, invents a new call id on the retry.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tempo_agents.activity_options import ActivityOptions
from tempo_agents.journal.chunks import (
    Chunk,
    StepResetChunk,
    TextDeltaChunk,
    ToolCallChunk,
    ToolCallDeltaChunk,
    ToolInputStreamingEndChunk,
    ToolInputStreamingStartChunk,
    chunk_from_wire,
)
from tempo_agents.models.openai_compatible import openai_compatible
from tempo_agents.streams import ToolInputPreview
from tempo_agents.streams.stream import effective_chunks
from tests.conftest import AppFactory, running_worker
from tests.support.agents import weather_agent
from tests.support.provider_servers.openai_server import (
    OpenAIServer,
    Reply,
    ToolCallSpec,
    chunk,
    dropped_after,
    text_stream,
    tool_calls_stream,
)

pytestmark = pytest.mark.timeout(60)


def call_ids(chunks: list[Chunk], kind: type[Any]) -> list[str]:
    return [c.payload.tool_call_id for c in chunks if isinstance(c, kind)]


async def test_a_reset_drops_the_failed_attempts_tool_call_input(make_app: AppFactory) -> None:
    first = tool_calls_stream([ToolCallSpec("weather", {"city": "Reykjavik"}, id="call_lost")], fragment_size=4)
    retried = tool_calls_stream([ToolCallSpec("weather", {"city": "Reykjavik"}, id="call_kept")], fragment_size=4)
    async with OpenAIServer() as server:
        server.script(dropped_after(first, 4), retried, text_stream("Cold."))
        model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None)
        app = make_app([weather_agent(model, "resets")])
        async with running_worker(app):
            result = await app.agent("resets").generate("Reykjavik?")
            journal = [chunk_from_wire(e.chunk, e.offset) for e in await app.store.read_chunks(result.run_id)]

    [reset] = [c for c in journal if isinstance(c, StepResetChunk)]
    assert reset.payload.step_number == 0 and reset.payload.attempt == 2
    assert reset.payload.discard_from is not None and reset.offset is not None
    dropped = [c for c in journal if reset.payload.discard_from <= (c.offset or 0) < reset.offset]
    # Everything dropped belongs to the failed attempt, and the failed attempt's call is all of it.
    assert dropped and set(call_ids(dropped, ToolInputStreamingStartChunk) + call_ids(dropped, ToolCallDeltaChunk)) == {
        "call_lost"
    }
    kept = effective_chunks(journal)
    assert "call_lost" not in call_ids(kept, ToolInputStreamingStartChunk) + call_ids(kept, ToolCallDeltaChunk)
    # The retried attempt's chunks are whole: every started input ends and becomes a call that ran.
    assert call_ids(kept, ToolInputStreamingStartChunk) == call_ids(kept, ToolInputStreamingEndChunk) == ["call_kept"]
    assert call_ids(kept, ToolCallChunk) == ["call_kept"]
    assert [r.payload.tool_call_id for r in result.tool_results] == ["call_kept"]
    assert [c.payload.tool_call_id for c in result.tool_calls] == ["call_kept"]

    preview = ToolInputPreview()
    for item in journal:
        preview.feed(item)
        if isinstance(item, StepResetChunk):
            assert preview.tool_names == {} and preview.text("call_lost") == ""
    assert preview.tool_names == {"call_kept": "weather"}


async def test_a_run_that_gives_up_reports_no_text_from_its_failed_attempts(make_app: AppFactory) -> None:
    partial = Reply(events=[chunk({"content": "The answer"}), chunk({"content": " is"})])
    async with OpenAIServer() as server:
        server.script(*[dropped_after(partial, 2)] * 2)
        model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None)
        agent = weather_agent(model, "gives-up")
        agent.model_step_activity = ActivityOptions(
            retry_initial_interval=timedelta(milliseconds=100), maximum_attempts=2
        )
        app = make_app([agent])
        async with running_worker(app):
            result = await app.agent("gives-up").generate("?")
    assert result.finish_reason == "error"
    assert result.error is not None and "the connection dropped" in result.error
    assert result.text == ""
    assert [c for c in result.chunks if isinstance(c, TextDeltaChunk)] == []
