"""The client's side of a thread's workflow (``workflows/thread.py``): sending a message to a thread, the thread as
it stands (its runs and messages), and taking a queued run out of its queue."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from temporalio.client import Client, WithStartWorkflowOperation, WorkflowQueryFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.store.base import Store
from tempo_agents.workflows.thread import ThreadWorkflow
from tempo_agents.workflows.thread_payloads import (
    CANCEL_QUEUED_UPDATE,
    SEND_UPDATE,
    THREAD_WORKFLOW_ID_PREFIX,
    VIEW_QUERY,
    ThreadMessage,
    ThreadOutcome,
    ThreadRun,
    ThreadRunEntry,
    ThreadState,
    ThreadStrategy,
    ThreadView,
)

__all__ = ["ThreadSnapshot", "cancel_queued", "read_thread", "send_to_thread", "thread_view", "thread_workflow_id"]


def _escaped(part: str) -> str:
    return quote(part, safe="").replace("-", "%2D")


def thread_workflow_id(task_queue: str, resource_id: str, thread_id: str) -> str:
    """The id of a thread's workflow: ``thread-<task queue>-<resource>-<thread>``, each part percent-escaped (``-``
    included), so no two threads share one. The App's task queue is part of it: an App's threads are its own, as its
    runs are (two Apps on one namespace may each have a thread "t1", each with its own store)."""
    return f"{THREAD_WORKFLOW_ID_PREFIX}{_escaped(task_queue)}-{_escaped(resource_id)}-{_escaped(thread_id)}"


async def send_to_thread(
    client: Client, task_queue: str, run: ThreadRun, strategy: ThreadStrategy, sent_by: str | None = None
) -> ThreadOutcome:
    """Send a new message (as the run it would start) to its thread's workflow, starting that workflow if it does
    not run: one update-with-start, so two senders racing on one thread are ordered by Temporal. Each send is an
    update of its own: a run id the thread already holds (queued, active or done) is answered ``duplicate``."""
    memory = run.run_input.options.memory
    assert memory is not None, "only a run with memory has a thread"
    start = WithStartWorkflowOperation(
        ThreadWorkflow.run,
        ThreadState(thread_id=memory.thread, resource_id=memory.resource),
        id=thread_workflow_id(task_queue, memory.resource, memory.thread),
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    outcome: ThreadOutcome = await client.execute_update_with_start_workflow(
        SEND_UPDATE,
        ThreadMessage(run=run, strategy=strategy, sent_by=sent_by),
        start_workflow_operation=start,
        id=f"send:{run.run_id}:{uuid.uuid4()}",
        result_type=ThreadOutcome,
    )
    return outcome


async def thread_view(client: Client, task_queue: str, thread_id: str, resource_id: str) -> ThreadView:
    """The thread's runs as its workflow knows them (none when no message was ever sent to it)."""
    handle = client.get_workflow_handle(thread_workflow_id(task_queue, resource_id, thread_id))
    try:
        view: ThreadView = await handle.query(VIEW_QUERY, result_type=ThreadView)
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise
        return ThreadView(thread_id=thread_id, resource_id=resource_id)
    except WorkflowQueryFailedError:
        return ThreadView(thread_id=thread_id, resource_id=resource_id)
    return view


async def cancel_queued(client: Client, task_queue: str, thread_id: str, resource_id: str, run_id: str) -> bool:
    """Take ``run_id`` out of its thread's queue; ``False`` when it is not queued there (it started already, ended,
    or was never sent to this thread)."""
    handle = client.get_workflow_handle(thread_workflow_id(task_queue, resource_id, thread_id))
    try:
        removed: bool = await handle.execute_update(CANCEL_QUEUED_UPDATE, run_id, result_type=bool)
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise
        return False
    return removed


@dataclass(frozen=True)
class ThreadSnapshot:
    """A thread as it stands: its runs (active, queued in the order they will run, done oldest first, waiting: those
    that yielded the thread while they wait for people) and its messages in the order they were said."""

    thread_id: str
    resource_id: str
    active: list[ThreadRunEntry] = field(default_factory=list)
    queued: list[ThreadRunEntry] = field(default_factory=list)
    done: list[ThreadRunEntry] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    waiting: list[ThreadRunEntry] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        """The JSON form (``GET /api/threads/{threadId}``)."""
        return {
            "threadId": self.thread_id,
            "resourceId": self.resource_id,
            "runs": {
                "active": [entry.to_wire() for entry in self.active],
                "queued": [entry.to_wire() for entry in self.queued],
                "done": [entry.to_wire() for entry in self.done],
                "waiting": [entry.to_wire() for entry in self.waiting],
            },
            "messages": self.messages,
        }


async def read_thread(
    client: Client, task_queue: str, store: Store, thread_id: str, resource_id: str
) -> ThreadSnapshot:
    """The thread's runs (from its workflow) and messages (from the store)."""
    view = await thread_view(client, task_queue, thread_id, resource_id)
    messages = await store.get_thread_messages(thread_id, resource_id)
    return ThreadSnapshot(
        thread_id=thread_id,
        resource_id=resource_id,
        active=list(view.active),
        queued=list(view.queued),
        done=list(view.done),
        messages=messages,
        waiting=list(view.waiting),
    )
