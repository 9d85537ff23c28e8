"""The setting of "Budgets": ``openai/gpt-4o`` is a local server speaking OpenAI's API (``OPENAI_BASE_URL``),
whose model searches the tickets at its first step (60,000 tokens, past the block's run limit of 50,000) and
answers at its second; ``search_tickets`` is the page's tool. The block's runs must both wait for a raise, the
raised one go on to its end and the other end as ``budget-exceeded``, and the counters must say what was spent."""

from __future__ import annotations

import io
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, redirect_stdout
from typing import Any

from tempo_agents import ToolContext, create_tool
from tests.support.docs_scenes.scene import Names
from tests.support.provider_servers.openai_server import (
    OpenAIServer,
    RecordedRequest,
    Reply,
    ToolCallSpec,
    text_stream,
    tool_calls_stream,
)

__all__ = ["a_tenant_with_a_budget"]

STEP_TOKENS = (30_000, 30_000)
"""Input and output tokens of the first step: 60,000 tokens, $0.375 at gpt-4o's published prices."""


def _gpt_4o(request: RecordedRequest) -> Reply:
    if any(message["role"] == "tool" for message in request.json["messages"]):
        return text_stream("Three tickets need an answer today.", usage=(1_000, 100))
    return tool_calls_stream([ToolCallSpec("search_tickets", {"query": "open"})], usage=STEP_TOKENS)


async def _search(data: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"tickets": [1187, 1188, 1190]}


@contextmanager
def _environment(**settings: str) -> Iterator[None]:
    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@asynccontextmanager
async def a_tenant_with_a_budget(names: Names, address: str) -> AsyncIterator[None]:
    schema = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    names["search_tickets"] = create_tool(
        id="search_tickets", description="Search the tickets", input_schema=schema, execute=_search
    )
    async with OpenAIServer() as server:
        server.respond_with(_gpt_4o)
        with (
            _environment(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-local"),
            redirect_stdout(io.StringIO()) as printed,
        ):
            yield
    assert printed.getvalue().splitlines() == ["suspended", "stop budget-exceeded"]
    usage = names["usage"]
    assert usage.waiting is not None
    [run] = [counter for counter in usage.counters if counter.scope == "run"]
    assert (run.tokens, run.limit_tokens, run.remaining_tokens) == (60_000, 50_000, 0)
    assert run.cost_usd == 0.375
    assert len(server.requests) == 3  # a first step for each run, and the raised run's second
