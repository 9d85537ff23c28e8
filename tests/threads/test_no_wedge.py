"""No message wedges a thread: a message a thread's workflow could not carry (too large, ids too long for Temporal)
is refused before it reaches the thread, with a typed error (HTTP 413 / 400), by the client and again by the
workflow's ``thread_send`` validator for a sender that skips the client's check; the next message runs at once. A
queue too large to carry across continue-as-new starts its next run first instead of failing every workflow task."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from tempo_agents import App
from tempo_agents.errors import IdTooLongError, MessageTooLargeError
from tempo_agents.threads.operations import thread_workflow_id
from tempo_agents.workflows.thread import ThreadWorkflow
from tempo_agents.workflows.thread_limits import MAX_MESSAGE_BYTES, MAX_WORKFLOW_ID_CHARS, MESSAGE_TOO_LARGE
from tempo_agents.workflows.thread_payloads import SEND_UPDATE, ThreadMessage, ThreadOutcome, ThreadRun, ThreadState
from tests.conftest import AppFactory, continue_as_new_server, running_worker
from tests.support.http_api import served
from tests.support.thread_agents import Gate, gated_agent

pytestmark = pytest.mark.timeout(240)

MEMORY = {"thread": "t1", "resource": "u1"}
HUGE = "x" * 3 * 2**20


async def test_an_oversized_message_is_refused_and_the_next_one_runs(make_app: AppFactory) -> None:
    app = make_app([gated_agent(Gate(opened=True))])
    async with running_worker(app):
        with pytest.raises(MessageTooLargeError) as refused:
            await app.stream("chat", HUGE, memory=MEMORY)
        assert refused.value.code == "MESSAGE_TOO_LARGE"
        assert refused.value.limit == MAX_MESSAGE_BYTES
        assert refused.value.size is not None and refused.value.size > len(HUGE)
        assert "at most 1048576 bytes (1 MiB)" in str(refused.value)
        after = await app.stream("chat", "hello", memory=MEMORY)
        assert after.thread_outcome is not None and after.thread_outcome.outcome == "started"
        assert await after.text == "hello after 1"  # the refused message never reached the thread
        big = await app.stream("chat", "y" * (MAX_MESSAGE_BYTES // 2), memory=MEMORY)  # large, but carried
        assert await big.text == "y" * (MAX_MESSAGE_BYTES // 2) + " after 2"


async def _send_unchecked(client: Client, app: App, text: str) -> ThreadOutcome:
    """A ``thread_send`` straight to the thread's workflow, as a client that does not check sizes would send it."""
    run_input, attributes = app.prepare_run(app.agent("chat"), text, {"memory": MEMORY})
    run = ThreadRun(
        run_input=run_input, task_queue=app.task_queue, search_attributes={a.key.name: a.value for a in attributes}
    )
    start = WithStartWorkflowOperation(
        ThreadWorkflow.run,
        ThreadState(thread_id="t1", resource_id="u1"),
        id=thread_workflow_id(app.task_queue, "u1", "t1"),
        task_queue=app.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    outcome: ThreadOutcome = await client.execute_update_with_start_workflow(
        SEND_UPDATE,
        ThreadMessage(run=run),
        start_workflow_operation=start,
        id=f"send:{run.run_id}:{uuid.uuid4()}",
        result_type=ThreadOutcome,
    )
    return outcome


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
async def test_the_thread_refuses_an_oversized_message_that_skipped_the_clients_check(
    make_app: AppFactory, client: Client, busy: bool
) -> None:
    """A message of 1.5 MiB (over the thread's limit, under Temporal's) sent straight to the thread's workflow: its
    validator refuses it (nothing in its history, no failed workflow task); a normal message right after is answered
    at once, on an idle thread and on one with an active run."""
    gate = Gate(opened=not busy)
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        first = await app.stream("chat", "one", memory=MEMORY) if busy else None
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await _send_unchecked(client, app, "x" * (3 * MAX_MESSAGE_BYTES // 2))
        assert isinstance(refused.value.cause, ApplicationError)
        assert refused.value.cause.type == MESSAGE_TOO_LARGE
        assert "too large for a thread" in refused.value.cause.message
        after = await app.stream("chat", "two", memory=MEMORY)
        assert after.thread_outcome is not None
        assert after.thread_outcome.outcome == ("queued" if busy else "started")
        gate.open()
        if first is not None:
            assert await first.text == "one after 1"
        assert await after.text == f"two after {1 + busy}"
        history = await client.get_workflow_handle(thread_workflow_id(app.task_queue, "u1", "t1")).fetch_history()
    assert not [e for e in history.events if e.HasField("workflow_task_failed_event_attributes")]


async def test_the_next_message_waits_out_a_task_failed_by_a_message_past_temporals_limit(
    make_app: AppFactory, client: Client
) -> None:
    """A 3 MiB message sent straight to the thread's workflow cannot even be refused there (the refusal carries the
    message, over Temporal's 2 MiB): its workflow task fails until Temporal drops the update. The App's next message
    waits for the thread to go on by itself, and runs."""
    app = make_app([gated_agent(Gate(opened=True))])
    async with running_worker(app):
        with pytest.raises(RPCError):
            await _send_unchecked(client, app, HUGE)
        after = await app.stream("chat", "two", memory=MEMORY)
        assert after.thread_outcome is not None and after.thread_outcome.outcome == "started"
        assert await after.text == "two after 1"


async def test_over_http_an_oversized_message_is_413_and_the_next_one_runs(make_app: AppFactory) -> None:
    app = make_app([gated_agent(Gate(opened=True))])
    async with running_worker(app), served(app, max_body_bytes=8 * 2**20) as http:
        refused = await http.post("/agents/chat/generate", json={"messages": HUGE, "memory": MEMORY})
        assert refused.status_code == 413
        assert refused.json()["code"] == "MESSAGE_TOO_LARGE"
        assert refused.json()["limit"] == MAX_MESSAGE_BYTES
        assert "too large for a thread" in refused.json()["error"]
        answered = await http.post("/agents/chat/generate", json={"messages": "hello", "memory": MEMORY})
        assert answered.status_code == 200
        assert answered.json()["text"] == "hello after 1"


async def test_ids_too_long_for_a_workflow_id_are_refused_naming_the_limit(make_app: AppFactory) -> None:
    app = make_app([gated_agent(Gate(opened=True))])
    async with running_worker(app), served(app) as http:
        for memory in ({"thread": "t" * 1000, "resource": "u1"}, {"thread": "t1", "resource": "r" * 1000}):
            with pytest.raises(IdTooLongError) as refused:
                await app.stream("chat", "hello", memory=memory)
            assert refused.value.limit == MAX_WORKFLOW_ID_CHARS
            assert "Temporal allows at most 1000" in str(refused.value)
            answered = await http.post("/agents/chat/generate", json={"messages": "hello", "memory": memory})
            assert answered.status_code == 400
            assert answered.json()["code"] == "ID_TOO_LONG"
            assert "at most 1000" in answered.json()["error"]
        with pytest.raises(IdTooLongError, match="at most 1000"):
            await app.stream("chat", "hello", memory=MEMORY, run_id="r" * 1001)
        view = await http.get(f"/threads/{'t' * 1000}", params={"resourceId": "u1"})
        assert view.status_code == 200 and view.json()["runs"] == {
            "active": [],
            "queued": [],
            "done": [],
            "waiting": [],
        }
        assert await (await app.stream("chat", "hello", memory=MEMORY)).text == "hello after 1"


async def test_a_queue_too_large_to_carry_runs_its_messages_before_continuing_as_new(tmp_path: Path) -> None:
    """Three messages of most of a megabyte each wait behind a run while the thread's history is long enough to
    continue as new: the queue (some 2.4 MB) cannot travel in one payload, so the thread starts its next run
    first, and every message runs in turn."""
    async with continue_as_new_server(history_events=10) as env:
        gate = Gate()
        app = App(
            agents=[gated_agent(gate)],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        texts = [str(n) * 800_000 for n in range(3)]
        async with running_worker(app, env.client):
            first = await app.stream("chat", "one", memory=MEMORY)
            queued = [await app.stream("chat", text, memory=MEMORY) for text in texts]
            assert [q.thread_outcome.position for q in queued if q.thread_outcome] == [1, 2, 3]
            gate.open()
            assert await first.text == "one after 1"
            for n, (stream, text) in enumerate(zip(queued, texts, strict=True), start=2):
                assert await asyncio.wait_for(stream.text, 120) == f"{text} after {n}"
            history = await env.client.get_workflow_handle(
                thread_workflow_id(app.task_queue, "u1", "t1")
            ).fetch_history()
        await app.store.close()
    assert not [e for e in history.events if e.HasField("workflow_task_failed_event_attributes")]
