"""A thread whose run waits for an approval goes on, on the real adapters against provider servers that refuse what
the providers refuse (a tool call without its result, a result without its call, two results for one call): every
follow-up is answered at once, and the approval's continuation reads them, in the order they were said."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tempo_agents import Agent, App, create_tool
from tempo_agents.models.anthropic import AnthropicModel
from tempo_agents.models.model import Model
from tempo_agents.models.openai_compatible import openai_compatible
from tests.conftest import AppFactory, running_worker
from tests.support.provider_servers.anthropic_server import AnthropicServer, text_response, tool_use_response
from tests.support.provider_servers.openai_server import OpenAIServer, ToolCallSpec, text_stream, tool_calls_stream
from tests.support.provider_servers.transcript_rules import anthropic_refusal, openai_refusal
from tests.support.waiting_threads import RESOURCE, until_idle, until_waiting

FOLLOW_UPS = ("one", "two", "three")


def payments(model: Model) -> Agent:
    pay = create_tool(
        id="pay", description="Pays someone", execute=lambda data: f"paid {data['to']}", require_approval=True
    )
    return Agent(id="payments", model=model, tools={"pay": pay})


async def converse(app: App, thread_id: str) -> str:
    """Ask for a payment, say three things while it waits for its approval, then approve it."""
    memory = {"thread": thread_id, "resource": RESOURCE}
    first = await app.generate("payments", "Pay Bob", memory=memory)
    assert first.finish_reason == "suspended"
    await until_waiting(app, thread_id, 1)
    for text in FOLLOW_UPS:
        reply = await app.generate("payments", text, memory=memory, thread_strategy="reject")
        assert reply.text == f"noted: {text}"
        await until_idle(app, thread_id)
    answered = await app.approve_tool_call("payments", run_id=first.run_id)
    return await answered.text


def said_in_order(texts: list[str]) -> None:
    """The continuation read the follow-ups after the payment and before the note that the answer came."""
    joined = "\n".join(texts)
    places = [joined.index(text) for text in ("Pay Bob", *(f"noted: {t}" for t in FOLLOW_UPS), "(Note: this run")]
    assert places == sorted(places), joined


async def test_openai_compatible(make_app: AppFactory) -> None:
    async with OpenAIServer() as server:
        server.script(
            tool_calls_stream([ToolCallSpec("pay", {"to": "Bob"}, id="call_pay")]),
            *(text_stream(f"noted: {text}") for text in FOLLOW_UPS),
            text_stream("Paid Bob."),
        )
        app = make_app([payments(openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None))])
        async with running_worker(app):
            assert await converse(app, "t-openai") == "Paid Bob."
        assert server.rejected == []
        bodies = [request.json for request in server.requests]
    assert [openai_refusal(body["messages"]) for body in bodies] == [None] * 5
    last = bodies[-1]["messages"]
    said_in_order([m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in last])
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert results == ["paid Bob"]  # the call's result next to it: the marker the follow-ups read was replaced
    waiting = [json.loads(m["content"]) for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert waiting[0]["status"] == "waiting" and waiting[0]["awaitingApproval"] is True


async def test_anthropic(make_app: AppFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    async with AnthropicServer() as server:
        server.script(
            [
                tool_use_response(("pay", {"to": "Bob"})),
                *(text_response(f"noted: {text}") for text in FOLLOW_UPS),
                text_response("Paid Bob."),
            ]
        )
        app = make_app([payments(AnthropicModel("claude-test", base_url=server.base_url))])
        async with running_worker(app):
            assert await converse(app, "t-anthropic") == "Paid Bob."
        bodies: list[dict[str, Any]] = [request.json for request in server.requests]
    assert len(bodies) == 5
    assert [anthropic_refusal(body["messages"]) for body in bodies] == [None] * 5
    last = bodies[-1]["messages"]
    said_in_order([json.dumps(m["content"]) for m in last])


def test_the_servers_refuse_what_the_providers_refuse() -> None:
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    user = {"role": "user", "content": "hi"}
    assert openai_refusal([user, call, result, user]) is None
    assert "did not have response messages: c1" in (openai_refusal([user, call, user]) or "")
    assert "must be a response to a preceeding message" in (openai_refusal([user, result]) or "")
    assert "second response" in (openai_refusal([user, call, result, result]) or "")
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "pay", "input": {}}]}
    block = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
    answer = {"role": "user", "content": [block]}
    twice = {"role": "user", "content": [block, block]}
    assert anthropic_refusal([user, use, answer]) is None
    assert "without `tool_result` blocks" in (anthropic_refusal([user, use, user]) or "")
    assert "without `tool_result` blocks" in (anthropic_refusal([user, use]) or "")
    assert "unexpected `tool_use_id`" in (anthropic_refusal([user, answer]) or "")
    assert "single result" in (anthropic_refusal([user, use, twice]) or "")
