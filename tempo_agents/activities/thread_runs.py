"""The activities of a thread's workflow: which of its active runs wait for a person (from the store's waits), and
the messages of a rolled-back run taken out of the thread."""

from __future__ import annotations

from tempo_agents.store.base import Store
from tempo_agents.workflows.thread_payloads import RunsWaitingQuery

__all__ = ["remove_rolled_back", "runs_waiting"]


async def runs_waiting(store: Store, task_queue: str, query: RunsWaitingQuery) -> list[str]:
    """The ids among ``query.run_ids`` that wait for a person now."""
    waiting = await store.waiting_runs(task_queue, thread_id=query.thread_id, resource_id=query.resource_id)
    listed = {call.run_id for calls in waiting.runs for call in calls}
    return [run_id for run_id in query.run_ids if run_id in listed]


async def remove_rolled_back(store: Store, query: RunsWaitingQuery) -> None:
    """Remove the messages of the runs ``query.run_ids`` (cancelled by a ``rollback`` message) from the thread."""
    for run_id in query.run_ids:
        await store.remove_run_from_thread(query.thread_id, query.resource_id, run_id)
