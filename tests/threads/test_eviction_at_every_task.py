"""A thread whose workflow is evicted from the worker's cache after every workflow task still works, and the worker
that evicts it still shuts down.

Under load, a workflow worker evicts workflows mid-flight (its cache is full, a task failed, the worker stops), and
an eviction that leaves a task of the workflow behind blocks the worker's shutdown for good (the SDK retries it
forever). Here the worker keeps no workflow cached (``max_cached_workflows=0``), so the thread's workflow and its
runs are evicted after every task and rebuilt from history for the next one: while a child run is being started,
while a run waits and yields the thread, while its continuation is queued and told to go on, while an interrupting
message or an auto-resuming one is decided. Each scenario must end as it does with a cache, no eviction may fail (a
task that survives the cancellation of every task at eviction fails it: the SDK logs it and retries), and the worker
must then stop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory
from tests.support.suspending_tools import age_tool
from tests.support.waiting_threads import RESOURCE, payments_agent, until_idle

PATIENCE = 120.0
"""Only so that a hang fails instead of blocking the suite: nothing here is timed."""


@asynccontextmanager
async def evicting_worker(app: App, caplog: pytest.LogCaptureFixture) -> AsyncIterator[None]:
    """A worker that caches no workflow (every workflow is evicted after each of its tasks); leaving the block
    shuts it down, which must finish, and no eviction may have failed meanwhile."""
    worker = app.worker(max_cached_workflows=0)
    with caplog.at_level(logging.WARNING, logger="temporalio.worker"):
        await worker.__aenter__()
        try:
            yield
        finally:
            async with asyncio.timeout(PATIENCE):  # a workflow that cannot be evicted hangs the shutdown
                await worker.__aexit__(None, None, None)
    failed = [r.getMessage() for r in caplog.records if "eviction" in r.getMessage().lower()]
    assert failed == []


async def test_a_waiting_run_yields_and_goes_on_with_its_thread_evicted_at_every_task(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app([payments_agent()])
    memory = {"thread": "t-evicted", "resource": RESOURCE}
    async with evicting_worker(app, caplog):
        first = await app.generate("payments", "Pay Bob", memory=memory)
        assert first.finish_reason == "suspended"
        replies = []
        for strategy, text in (("interrupt", "one"), ("enqueue", "two")):
            reply = await app.generate("payments", text, memory=memory, thread_strategy=strategy)
            replies.append(reply.text)
            await until_idle(app, "t-evicted")
        assert replies == ["noted: one", "noted: two"]

        answered = await app.approve_tool_call("payments", run_id=first.run_id)
        continued = await answered.text
        assert continued.startswith("paid; said meanwhile: Pay Bob | one | two | (Note: this run waited")
        await until_idle(app, "t-evicted")
        thread = await app.thread("t-evicted", resource_id=RESOURCE)
        assert thread.waiting == [] and thread.active == [] and thread.queued == []


async def test_auto_resume_with_invalid_resume_data_with_its_thread_evicted_at_every_task(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    def script(request: ModelRequest) -> ScriptedResponse:
        last_user = [m for m in request.messages if m.role == "user"][-1].text
        if request.step == 0 and last_user == "start":
            return ScriptedResponse(tool_calls=[ScriptedToolCall("askAge", {"name": "A"})])
        if request.step == 0:
            return ScriptedResponse(
                tool_calls=[ScriptedToolCall("askAge", {"name": "A", "resumeData": {"age": "old"}})]
            )
        return ScriptedResponse(text="ok")

    app = make_app([Agent(id="bad-auto", model=ScriptedModel(script), tools={"askAge": age_tool()})])
    memory = {"thread": "t-evicted-auto", "resource": "u"}
    async with evicting_worker(app, caplog):
        first = await app.agent("bad-auto").generate("start", memory=memory, auto_resume_suspended_tools=True)
        second = await app.agent("bad-auto").generate("old", memory=memory, auto_resume_suspended_tools=True)
        still_waiting = await app.pending(first.run_id)
    result: dict[str, Any] = second.tool_results[0].payload.result
    assert result["error"] is True
    assert [p.tool_name for p in still_waiting] == ["askAge"]
