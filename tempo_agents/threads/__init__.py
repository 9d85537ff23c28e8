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

__all__ = [
    "ThreadSnapshot",
    "cancel_queued",
    "check_thread_ids",
    "read_thread",
    "send_to_thread",
    "thread_view",
    "thread_workflow_id",
]
