"""Threads: a conversation's workflow, what is sent to it and what it shows (its runs, its queue, its waits)."""

from tempo_agents.threads.operations import ThreadSnapshot, check_thread_ids, thread_workflow_id

__all__ = ["ThreadSnapshot", "check_thread_ids", "thread_workflow_id"]
