"""The client's side of a thread's workflow (``workflows/thread.py``): sending a message to a thread, the thread as
it stands (its runs and messages), and taking a queued run out of its queue."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.errors import IdTooLongError, MessageTooLargeError
from tempo_agents.store.base import Store
from tempo_agents.workflows import thread_limits
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

__all__ = [
    "ThreadSnapshot",
    "cancel_queued",
    "check_thread_ids",
    "read_thread",
    "send_to_thread",
    "thread_view",
    "thread_workflow_id",
]


def _escaped(part: str) -> str:
    return quote(part, safe="").replace("-", "%2D")


def thread_workflow_id(task_queue: str, resource_id: str, thread_id: str) -> str:
    """The id of a thread's workflow: ``thread-<task queue>-<resource>-<thread>``, each part percent-escaped (``-``
    included), so no two threads share one. The App's task queue is part of it: an App's threads are its own, as its
    runs are (two Apps on one namespace may each have a thread "t1", each with its own store)."""
    return f"{THREAD_WORKFLOW_ID_PREFIX}{_escaped(task_queue)}-{_escaped(resource_id)}-{_escaped(thread_id)}"


FAILED_TASK_PATIENCE_SECONDS = 120.0
"""How long a message waits for its thread's workflow to get past a failed workflow task before its sender is told."""

_FAILED_TASK = "Workflow Task in failed state"


def _thread_start(task_queue: str, resource_id: str, thread_id: str) -> WithStartWorkflowOperation[Any, Any]:
    """Start the thread's workflow unless it runs (an operation serves one update-with-start call only)."""
    return WithStartWorkflowOperation(
        ThreadWorkflow.run,
        ThreadState(thread_id=thread_id, resource_id=resource_id),
        id=thread_workflow_id(task_queue, resource_id, thread_id),
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )


def check_thread_ids(task_queue: str, resource_id: str, thread_id: str, run_id: str | None = None) -> None:
    """Raise :class:`IdTooLongError` when the thread's workflow id (or the run id) is longer than Temporal allows:
    the message would never reach its thread."""
    workflow_id = thread_workflow_id(task_queue, resource_id, thread_id)
    limit = thread_limits.MAX_WORKFLOW_ID_CHARS
    if len(workflow_id) > limit:
        raise IdTooLongError(
            f"the thread id and resource id are too long: the thread's workflow id "
            f"(thread-<task queue>-<resource>-<thread>, each part percent-escaped, so '-', '/' and every byte "
            f"outside A-Z a-z 0-9 _ . ~ count three characters) would be {len(workflow_id)} characters, and "
            f"Temporal allows at most {limit}",
            limit=limit,
        )
    problem = None if run_id is None else thread_limits.run_id_too_long(run_id)
    if problem is not None:
        raise IdTooLongError(problem, limit=limit)


async def _checked_size(client: Client, message: ThreadMessage) -> None:
    """Raise :class:`MessageTooLargeError` when the message's payload (as the client's converter writes it, codec
    included) is larger than a thread carries."""
    (payload,) = await client.data_converter.encode([message])
    size = payload.ByteSize()
    problem = thread_limits.message_too_large(size)
    if problem is not None:
        raise MessageTooLargeError(problem, size=size, limit=thread_limits.MAX_MESSAGE_BYTES)


def _refusal(error: WorkflowUpdateFailedError) -> Exception:
    """The typed error for a message the thread's workflow refused (its ``thread_send`` validator), else the error."""
    cause = error.cause
    if isinstance(cause, ApplicationError):
        if cause.type == thread_limits.MESSAGE_TOO_LARGE:
            return MessageTooLargeError(cause.message, limit=thread_limits.MAX_MESSAGE_BYTES)
        if cause.type == thread_limits.ID_TOO_LONG:
            return IdTooLongError(cause.message, limit=thread_limits.MAX_WORKFLOW_ID_CHARS)
    return error


async def send_to_thread(
    client: Client, task_queue: str, run: ThreadRun, strategy: ThreadStrategy, sent_by: str | None = None
) -> ThreadOutcome:
    """Send a new message (as the run it would start) to its thread's workflow, starting that workflow if it does
    not run: one update-with-start, so two senders racing on one thread are ordered by Temporal. Each send is an
    update of its own: a run id the thread already holds (queued, active or done) is answered ``duplicate``."""
    memory = run.run_input.options.memory
    assert memory is not None, "only a run with memory has a thread"
    check_thread_ids(task_queue, memory.resource, memory.thread, run.run_id)
    message = ThreadMessage(run=run, strategy=strategy, sent_by=sent_by)
    await _checked_size(client, message)
    update_id = f"send:{run.run_id}:{uuid.uuid4()}"  # the same on every try: a try that got through answers again
    waited = 0.0
    while True:
        try:
            outcome: ThreadOutcome = await client.execute_update_with_start_workflow(
                SEND_UPDATE,
                message,
                start_workflow_operation=_thread_start(task_queue, memory.resource, memory.thread),
                id=update_id,
                result_type=ThreadOutcome,
            )
        except WorkflowUpdateFailedError as error:
            raise _refusal(error) from error
        except RPCError as error:
            if _FAILED_TASK not in error.message or waited >= FAILED_TASK_PATIENCE_SECONDS:
                raise
            # Temporal refuses updates while the thread's last workflow task failed. A task fails again while it
            # holds what failed it: an update from a sender that skipped the size check, which Temporal drops once
            # its sender gives up. Then the thread goes on by itself; this message waits for that.
            pause = min(2.0, 0.25 + waited / 4)
            await asyncio.sleep(pause)
            waited += pause
            continue
        return outcome


async def thread_view(client: Client, task_queue: str, thread_id: str, resource_id: str) -> ThreadView:
    """The thread's runs as its workflow knows them (none when no message was ever sent to it)."""
    workflow_id = thread_workflow_id(task_queue, resource_id, thread_id)
    if len(workflow_id) > thread_limits.MAX_WORKFLOW_ID_CHARS:  # no message ever reached such a thread
        return ThreadView(thread_id=thread_id, resource_id=resource_id)
    handle = client.get_workflow_handle(workflow_id)
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
    workflow_id = thread_workflow_id(task_queue, resource_id, thread_id)
    if len(workflow_id) > thread_limits.MAX_WORKFLOW_ID_CHARS:  # no message ever reached such a thread
        return False
    handle = client.get_workflow_handle(workflow_id)
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
