"""A rollback cancels the run, waits until it has closed and takes its messages off its memory thread: the next run
on the thread does not see them, the thread's other messages stay in order, and the run's journal is kept."""

from __future__ import annotations

import asyncio
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker

MEMORY = {"thread": "t-rollback", "resource": "u-1"}


def _user_texts(request: ModelRequest) -> list[str]:
    return [m.text for m in request.messages if m.role == "user"]


async def test_a_rolled_back_run_leaves_the_thread_as_it_was_and_its_journal_says_so(make_app: AppFactory) -> None:
    reached, release = asyncio.Event(), asyncio.Event()  # never released: the rollback cancels the call

    async def slow_lookup(data: dict[str, Any]) -> str:
        reached.set()
        await release.wait()
        return "found"

    def script(request: ModelRequest) -> ScriptedResponse:
        if request.messages[-1].text == "Look it up":
            return ScriptedResponse(text="Looking.", tool_calls=[ScriptedToolCall("lookup", {})])
        return ScriptedResponse(text=f"Answer to {request.messages[-1].text}.")

    model = ScriptedModel(script)
    lookup = create_tool(id="lookup", description="Looks up", execute=slow_lookup)
    app = make_app([Agent(id="r", model=model, tools={"lookup": lookup})])
    async with running_worker(app):
        kept = await app.generate("r", "First question", memory=MEMORY)
        stream = await app.stream("r", "Look it up", memory=MEMORY)
        await reached.wait()
        rolled_back = await app.rollback(stream.run_id)  # its tool is told it is cancelled (``ctx.cancelled``)
        after = await app.generate("r", "Second question", memory=MEMORY)

    assert kept.text == "Answer to First question."
    assert after.text == "Answer to Second question."
    assert rolled_back.status == "CANCELED"
    assert (rolled_back.thread_id, rolled_back.resource_id) == ("t-rollback", "u-1")
    assert rolled_back.removed_messages == 2  # its user message and its assistant message
    assert _user_texts(model.requests[-1]) == ["First question", "Second question"]
    thread = await app.store.get_thread_messages("t-rollback", "u-1")
    texts = [m["content"][0]["text"] for m in thread]
    assert texts == ["First question", "Answer to First question.", "Second question", "Answer to Second question."]
    journal = [entry.chunk for entry in await app.store.read_chunks(stream.run_id)]
    types = [chunk["type"] for chunk in journal]
    assert "tool-call" in types and "abort" in types  # what the run did is still its history
    assert types[-1] == "data-rolled-back"
    assert journal[-1]["data"] == {"threadId": "t-rollback", "resourceId": "u-1", "removedMessages": 2}


async def test_a_run_that_had_finished_is_rolled_back_too(make_app: AppFactory) -> None:
    model = ScriptedModel(lambda request: ScriptedResponse(text=f"Re: {request.messages[-1].text}"))
    app = make_app([Agent(id="f", model=model)])
    async with running_worker(app):
        first = await app.generate("f", "one", memory=MEMORY)
        second = await app.generate("f", "two", memory=MEMORY)
        await app.client.get_workflow_handle(second.run_id).result()  # closed, not only its journal finished
        rolled_back = await app.rollback(second.run_id)
        third = await app.generate("f", "three", memory=MEMORY)
    assert rolled_back.status == "COMPLETED"
    assert rolled_back.removed_messages == 2
    assert first.text == "Re: one"
    assert _user_texts(model.requests[-1]) == ["one", "three"]
    assert third.text == "Re: three"
