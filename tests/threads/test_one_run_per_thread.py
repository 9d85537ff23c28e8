"""At most one active run per thread: a second message waits its turn (enqueue, the default) or is refused
(reject); the queue is seen and cancelled; runs write the thread in the order they ran; threadless runs take
today's path."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import Client
from temporalio.service import RPCError

from tempo_agents import App
from tempo_agents.errors import ThreadBusyError
from tempo_agents.journal.chunks import ErrorChunk
from tempo_agents.threads.operations import ThreadSnapshot, thread_workflow_id
from tests.conftest import AppFactory, running_worker
from tests.support.thread_agents import Gate, gated_agent

MEMORY = {"thread": "t1", "resource": "u1"}


async def _thread_texts(app: App, thread: str = "t1", resource: str = "u1") -> list[tuple[str, str]]:
    messages = await app.store.get_thread_messages(thread, resource)
    return [(m["role"], "".join(p.get("text", "") for p in m["content"])) for m in messages]


async def _idle_thread(app: App, thread: str = "t1", resource: str = "u1") -> ThreadSnapshot:
    """The thread once its workflow has heard every run end (a run's finish chunk comes just before its end)."""
    for _ in range(500):
        view = await app.thread(thread, resource_id=resource)
        if not view.active and not view.queued:
            return view
        await asyncio.sleep(0.02)
    raise AssertionError(f"the thread stayed busy: {view}")


async def test_a_second_message_waits_for_the_active_run_and_sees_all_of_it(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        first = await app.stream("chat", "one", memory=MEMORY)
        second = await app.stream("chat", "two", memory=MEMORY)
        assert first.thread_outcome is not None and first.thread_outcome.outcome == "started"
        assert second.thread_outcome is not None
        assert second.thread_outcome.outcome == "queued"
        assert second.thread_outcome.active_run_id == first.run_id
        assert second.thread_outcome.position == 1

        thread = await app.thread("t1", resource_id="u1")
        assert [r.run_id for r in thread.active] == [first.run_id]
        assert [r.run_id for r in thread.queued] == [second.run_id]
        with pytest.raises(RPCError):  # the queued run does not exist yet
            await app.client.get_workflow_handle(second.run_id).describe()

        gate.open()
        assert await first.text == "one after 1"
        assert await second.text == "two after 2"

        thread = await _idle_thread(app)
        assert [(r.run_id, r.status) for r in thread.done] == [
            (first.run_id, "COMPLETED"),
            (second.run_id, "COMPLETED"),
        ]
    assert await _thread_texts(app) == [
        ("user", "one"),
        ("assistant", "one after 1"),
        ("user", "two"),
        ("assistant", "two after 2"),
    ]


async def test_reject_names_the_active_run_and_starts_nothing(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        first = await app.stream("chat", "one", memory=MEMORY)
        with pytest.raises(ThreadBusyError) as refused:
            await app.stream("chat", "two", memory=MEMORY, thread_strategy="reject", run_id="refused-run")
        assert refused.value.active_run_id == first.run_id
        assert first.run_id in refused.value.message
        gate.open()
        assert await first.text == "one after 1"
        await _idle_thread(app)
        # Once the thread is free, a rejecting message starts at once.
        third = await app.stream("chat", "three", memory=MEMORY, thread_strategy="reject")
        assert await third.text == "three after 2"
        with pytest.raises(RPCError):
            await app.client.get_workflow_handle("refused-run").describe()
    assert [text for _, text in await _thread_texts(app)] == ["one", "one after 1", "three", "three after 2"]


async def test_a_queued_run_is_cancelled_before_it_runs(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        first = await app.stream("chat", "one", memory=MEMORY)
        second = await app.stream("chat", "two", memory=MEMORY)
        third = await app.stream("chat", "three", memory=MEMORY)
        assert third.thread_outcome is not None and third.thread_outcome.position == 2
        assert await app.cancel_queued_run("t1", second.run_id, resource_id="u1")
        assert not await app.cancel_queued_run("t1", second.run_id, resource_id="u1")  # gone already
        assert not await app.cancel_queued_run("t1", first.run_id, resource_id="u1")  # active, not queued
        thread = await app.thread("t1", resource_id="u1")
        assert [r.run_id for r in thread.queued] == [third.run_id]
        assert [(r.run_id, r.status) for r in thread.done] == [(second.run_id, "removed")]
        # The cancelled run's stream ends, saying so.
        chunks = [chunk async for chunk in second.full_stream]
        assert [c.type for c in chunks] == ["error"]
        assert isinstance(chunks[0], ErrorChunk) and "removed" in chunks[0].payload.error
        gate.open()
        assert await third.text == "three after 2"
    assert [text for _, text in await _thread_texts(app)] == ["one", "one after 1", "three", "three after 2"]


async def test_threadless_runs_start_no_thread_workflow(make_app: AppFactory, client: Client) -> None:
    app = make_app([gated_agent(Gate(opened=True))])
    async with running_worker(app):
        runs = await asyncio.gather(*(app.stream("chat", f"m{i}") for i in range(3)))
        assert [await run.text for run in runs] == ["m0 after 1", "m1 after 1", "m2 after 1"]
        assert all(run.thread_outcome is None for run in runs)
    found = [w.id async for w in client.list_workflows(f'TaskQueue="{app.task_queue}"')]
    assert sorted(found) == sorted(run.run_id for run in runs)


def test_thread_workflow_ids_keep_parts_apart() -> None:
    assert thread_workflow_id("q", "a-b", "c") != thread_workflow_id("q", "a", "b-c")
    assert thread_workflow_id("q", "a/b", "c") == "thread-q-a%2Fb-c"
