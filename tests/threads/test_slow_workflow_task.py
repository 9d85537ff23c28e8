"""A workflow task that outlasts the SDK's deadlock timeout (its thread starved on a loaded machine), in the thread's
workflow or in a run of it, still lets the thread and the run go on, and the worker still stops.

The SDK fails such a task as a deadlock, raises an exception into the thread running it, wherever that thread is, and
runs the eviction that follows at once, beside the slow task. Here the task is held up at the worst place it can be:
in the workflow's event loop, while it schedules the wake-up of a task whose awaited future just completed (the
thread's task that started a run, once the run's start is known; the run's own task, once its first activity is
done). Interrupted there, or cancelled by the eviction before the slow thread schedules it, that wake-up is lost: the
task never runs again, not even to be cancelled, so the eviction never finishes, the SDK retries it for ever ("could
not be evicted"), the workflow makes no progress on the worker and the worker's shutdown hangs. The workers of
tempo-agents' own workflows neither interrupt them nor evict them under a running task
(``tempo_agents/worker/uninterrupted_runners.py``): the slow task ends as it would have, fails as a deadlock all the
same, and the workflow is evicted whole and replayed.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from temporalio.worker._workflow_instance import _WorkflowInstanceImpl

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW, THREAD_WORKFLOW
from tests.conftest import AppFactory
from tests.support.waiting_threads import RESOURCE, until_idle

DEADLOCK_TIMEOUT = 2.0
"""How long the SDK lets one workflow task run before it fails it as a deadlock (not configurable)."""

PATIENCE = 60.0
"""Only so that a hang fails instead of blocking the suite: nothing here is timed."""


@dataclass
class HeldWakeUp:
    """The first wake-up of a task running ``coroutine`` in a workflow of ``workflow_type``, once held up."""

    workflow_type: str
    coroutine: str
    held: bool = False


def _runs(task: asyncio.Task[Any], coroutine: str) -> bool:
    """Whether the task runs ``coroutine`` (its own or one it awaits)."""
    awaited: Any = task.get_coro()
    while awaited is not None:
        if getattr(awaited, "__qualname__", None) == coroutine:
            return True
        awaited = getattr(awaited, "cr_await", None)
    return False


def hold_first_wake_up(monkeypatch: pytest.MonkeyPatch, workflow_type: str, coroutine: str) -> HeldWakeUp:
    """Hold up, past the deadlock timeout, the workflow's event loop as it schedules the first wake-up of a task
    running ``coroutine`` (a task whose awaited future just completed): where a starved thread may be when the SDK
    gives up on its workflow task. Only once: the replay that follows runs at full speed."""
    hold = HeldWakeUp(workflow_type, coroutine)
    schedule = _WorkflowInstanceImpl.call_soon

    def held_call_soon(
        loop: _WorkflowInstanceImpl, callback: Callable[..., object], *args: Any, context: Any = None
    ) -> asyncio.Handle:
        task = getattr(callback, "__self__", None)
        if (
            not hold.held
            and isinstance(task, asyncio.Task)
            and "wakeup" in getattr(callback, "__name__", "")
            and _runs(task, hold.coroutine)
            and loop.get_info().workflow_type == hold.workflow_type
        ):
            hold.held = True
            time.sleep(DEADLOCK_TIMEOUT + 1.0)
        return schedule(loop, callback, *args, context=context)

    monkeypatch.setattr(_WorkflowInstanceImpl, "call_soon", held_call_soon)
    return hold


@pytest.mark.parametrize(
    ("workflow_type", "coroutine"),
    [
        (THREAD_WORKFLOW, "ThreadWorkflow._run_child"),  # the thread's task that started the run, its start known
        (AGENT_RUN_WORKFLOW, "AgentRunWorkflow.run"),  # the run itself, its first activity done
    ],
)
async def test_a_task_slower_than_the_deadlock_timeout_leaves_the_thread_and_its_run_whole(
    make_app: AppFactory,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    workflow_type: str,
    coroutine: str,
) -> None:
    hold = hold_first_wake_up(monkeypatch, workflow_type, coroutine)
    app = make_app([Agent(id="echo", model=ScriptedModel([ScriptedResponse(text="hello back")]))])
    thread_id = f"t-slow-{uuid.uuid4()}"
    worker = app.worker()
    stopped = False
    with caplog.at_level(logging.WARNING, logger="temporalio.worker"):
        await worker.__aenter__()
        try:
            async with asyncio.timeout(PATIENCE):
                result = await app.generate("echo", "hello", memory={"thread": thread_id, "resource": RESOURCE})
                await until_idle(app, thread_id)
                thread = await app.thread(thread_id, resource_id=RESOURCE)
        finally:
            async with asyncio.timeout(PATIENCE):  # a workflow that cannot be evicted hangs the shutdown
                await worker.__aexit__(None, None, None)
                stopped = True
    messages = [record.getMessage() for record in caplog.records]
    assert hold.held  # the task was held up where the test says
    assert any("Failed handling activation" in message for message in messages)  # and failed as a deadlock
    assert [message for message in messages if "failed running eviction" in message.lower()] == []
    assert stopped
    assert result.text == "hello back"
    assert [(run.run_id, run.status) for run in thread.done] == [(result.run_id, "COMPLETED")]
    assert thread.active == [] and thread.queued == []
