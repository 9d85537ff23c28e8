"""A run its thread still queues, as ``GET /api/runs/{runId}`` shows it: no workflow yet, so no step, usage or
history, but its agent, its thread and its place in the queue (``queue``: ``position``, 1 for next, and ``behind``, the
runs that hold the thread). The run page shows it so and follows the run once its turn comes. A run its thread has
started but whose workflow Temporal has not yet created (a moment; seconds on a loaded server) is ``starting``."""

from __future__ import annotations

from typing import Any

from tempo_agents.client.app import App
from tempo_agents.server.access.hidden import is_hidden

__all__ = ["queued_run_detail"]


async def queued_run_detail(app: App, run_id: str) -> dict[str, Any] | None:
    """The detail of ``run_id`` while its thread queues it or is starting it; ``None`` otherwise (it never was sent to a
    thread, it is another tenant's, its workflow exists, or it left the queue)."""
    if is_hidden(run_id):
        return None
    queued = await app.queued_run(run_id)
    if queued is None or (queued.position is None and queued.entry.state != "active"):
        return None
    place = queued.place
    starting = queued.position is None  # its thread started it; Temporal has not yet carried the start out
    return {
        "runId": run_id,
        "agentId": queued.entry.agent_id,
        "status": "starting" if starting else "queued",
        "threadId": place.thread_id,
        "resourceId": place.resource_id,
        "queue": None if starting else {"position": queued.position, "behind": list(queued.active_run_ids)},
        "startedAt": None,
        "closedAt": None,
        "taskQueue": place.task_queue,
        "historyLength": 0,
        "children": [],
        "rolledBack": None,
        "forkOf": None,
        "scheduleId": None,
        "forks": [],
        "runStatus": None,
        "mode": None,
        "step": None,
        "usage": None,
        "pending": [],
        "tasks": [],
        "answers": None,
        "notifications": [],
        "budget": None,
    }
