"""The notification delivery workflows of erased runs.

A run that notifies hands its events to a delivery workflow of its own (its id: the run's, then ``-notifications``),
started from the run's activities with neither the run's search attributes nor a parent, so the scope's listing does
not find it. Its history holds what the events said (a waiting call's arguments, who answered), so an erasure looks
each run's up by id."""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.client import Client, WorkflowExecutionStatus

from tempo_agents.erasure.executions import Execution, describe_execution
from tempo_agents.notifications import delivery_workflow_id
from tempo_agents.workflows.visibility_queries import quote

__all__ = ["delivery_executions"]

_IDS_PER_QUERY = 100


async def delivery_executions(client: Client, run_ids: Sequence[str]) -> list[Execution]:
    """Every execution of the delivery workflows of ``run_ids``: the ones visibility lists (each id's earlier
    executions, from before it continued as new, included) and the latest of each id, which visibility may not list
    yet."""
    ids = [delivery_workflow_id(run_id) for run_id in dict.fromkeys(run_ids)]
    found: dict[tuple[str, str], Execution] = {}
    for start in range(0, len(ids), _IDS_PER_QUERY):
        query = " OR ".join(f"WorkflowId = {quote(workflow_id)}" for workflow_id in ids[start : start + _IDS_PER_QUERY])
        async for listed in client.list_workflows(query):
            running = listed.status == WorkflowExecutionStatus.RUNNING
            found[(listed.id, listed.run_id)] = Execution(listed.id, listed.run_id, running, None)
    for workflow_id in ids:
        latest = await describe_execution(client, workflow_id)
        if latest is not None:
            running = latest.status == WorkflowExecutionStatus.RUNNING
            found.setdefault((workflow_id, latest.run_id), Execution(workflow_id, latest.run_id, running, None))
    return list(found.values())
