"""``interrupt`` and ``rollback`` messages jump the queue: the new run is the next to start, ahead of runs queued
before it; ``interrupt`` stops the active run at its next step boundary (finish reason ``interrupted``), ``rollback``
cancels it and removes its messages from the thread before the next run starts."""

from __future__ import annotations

import asyncio

from tempo_agents import App
from tempo_agents.threads.operations import ThreadSnapshot
from tests.conftest import AppFactory, running_worker
from tests.support.thread_agents import Gate, gated_agent

MEMORY = {"thread": "t1", "resource": "u1"}


async def _all_done(app: App, count: int) -> ThreadSnapshot:
    for _ in range(500):
        view = await app.thread("t1", resource_id="u1")
        if not view.active and not view.queued and len(view.done) == count:
            return view
        await asyncio.sleep(0.05)
    raise AssertionError(f"the thread did not finish: {view}")


async def test_rollback_cancels_the_active_run_and_runs_next(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        await app.stream("chat", "r-one", memory=MEMORY, run_id="r-one")
        await app.stream("chat", "r-two", memory=MEMORY, run_id="r-two")
        third = await app.stream("chat", "r-three", memory=MEMORY, run_id="r-three", thread_strategy="rollback")
        assert third.thread_outcome is not None
        assert (third.thread_outcome.outcome, third.thread_outcome.position) == ("queued", 1)
        assert third.thread_outcome.active_run_id == "r-one"
        for _ in range(600):  # the cancelled run ends while its model step still waits for the gate
            view = await app.thread("t1", resource_id="u1")
            if view.done:
                break
            await asyncio.sleep(0.05)
        assert [(r.run_id, r.status) for r in view.done] == [("r-one", "CANCELED")]
        assert [r.run_id for r in view.active] == ["r-three"] and [r.run_id for r in view.queued] == ["r-two"]
        gate.open()
        view = await _all_done(app, 3)
    messages = await app.store.get_thread_messages("t1", "u1")
    texts = ["".join(p.get("text", "") for p in m["content"]) for m in messages]
    assert texts == ["r-three", "r-three after 1", "r-two", "r-two after 2"]  # nothing of the rolled-back run
    assert [(r.run_id, r.status) for r in view.done] == [
        ("r-one", "CANCELED"),
        ("r-three", "COMPLETED"),
        ("r-two", "COMPLETED"),
    ]


async def test_interrupt_puts_the_new_run_ahead_of_the_queue(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        await app.stream("chat", "i-one", memory=MEMORY, run_id="i-one")
        await app.stream("chat", "i-two", memory=MEMORY, run_id="i-two")
        third = await app.stream("chat", "i-three", memory=MEMORY, run_id="i-three", thread_strategy="interrupt")
        assert third.thread_outcome is not None
        assert (third.thread_outcome.outcome, third.thread_outcome.position) == ("queued", 1)
        view = await app.thread("t1", resource_id="u1")
        assert [r.run_id for r in view.queued] == ["i-three", "i-two"]
        gate.open()
        view = await _all_done(app, 3)
    assert [r.run_id for r in view.done] == ["i-one", "i-three", "i-two"]
    messages = await app.store.get_thread_messages("t1", "u1")
    texts = ["".join(p.get("text", "") for p in m["content"]) for m in messages]
    # The interrupted run ended at its step boundary, its one step done and kept; the new run saw it.
    assert texts == ["i-one", "i-one after 1", "i-three", "i-three after 2", "i-two", "i-two after 3"]


async def test_interrupters_run_in_the_order_they_arrived_each_told_its_position(make_app: AppFactory) -> None:
    """Two ``interrupt`` messages and a ``rollback`` behind one queued message: each goes behind those that jumped
    before it and ahead of the queued one, told its true position, and they run first to last."""
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        await app.stream("chat", "j-one", memory=MEMORY, run_id="j-one")
        await app.stream("chat", "j-two", memory=MEMORY, run_id="j-two")
        positions = []
        for name, strategy in (("j-three", "interrupt"), ("j-four", "interrupt"), ("j-five", "rollback")):
            stream = await app.stream("chat", name, memory=MEMORY, run_id=name, thread_strategy=strategy)
            assert stream.thread_outcome is not None and stream.thread_outcome.outcome == "queued"
            positions.append(stream.thread_outcome.position)
        assert positions == [1, 2, 3]
        view = await app.thread("t1", resource_id="u1")
        assert [r.run_id for r in view.queued] == ["j-three", "j-four", "j-five", "j-two"]
        gate.open()
        view = await _all_done(app, 5)
    assert [r.run_id for r in view.done] == ["j-one", "j-three", "j-four", "j-five", "j-two"]
