"""The one activity of a thread's workflow: which of its active runs wait for a person (from the store's waits)."""

from __future__ import annotations

from tempo_agents.store.base import Store
from tempo_agents.workflows.thread_payloads import RunsWaitingQuery


async def runs_waiting(store: Store, task_queue: str, query: RunsWaitingQuery) -> list[str]:
    """The ids among ``query.run_ids`` that wait for a person now."""
    waiting = await store.waiting_runs(task_queue, thread_id=query.thread_id, resource_id=query.resource_id)
    listed = {call.run_id for calls in waiting.runs for call in calls}
    return [run_id for run_id in query.run_ids if run_id in listed]
