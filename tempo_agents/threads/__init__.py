"""Threads: a conversation's workflow, what is sent to it and what it shows (its runs, its queue, its waits)."""

from tempo_agents.threads.operations import (
    ThreadSnapshot,
    cancel_queued,
    check_thread_ids,
    read_thread,
    send_to_thread,
    thread_view,
    thread_workflow_id,
)
from tempo_agents.threads.queued_runs import QueuedPlace, QueuedRun, expire_removed_run, queued_run, remember_thread

__all__ = [
    "QueuedPlace",
    "QueuedRun",
    "ThreadSnapshot",
    "cancel_queued",
    "check_thread_ids",
    "expire_removed_run",
    "queued_run",
    "read_thread",
    "remember_thread",
    "send_to_thread",
    "thread_view",
    "thread_workflow_id",
]
