"""How a stream that follows a run's journal learns that the run has closed, when the journal says nothing more:
the probes :class:`AgentStream` asks after a while without chunks."""

from __future__ import annotations

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.errors import RunNotFoundError
from tempo_agents.streams import RunClosedProbe
from tempo_agents.threads import thread_view

__all__ = ["run_closed_probe", "thread_run_probe"]


def run_closed_probe(client: Client, run_id: str) -> RunClosedProbe:
    """The run's closing status from its workflow (``None`` while it runs); a run that does not exist raises
    :class:`RunNotFoundError`."""

    async def probe() -> str | None:
        try:
            description = await client.get_workflow_handle(run_id).describe()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                raise RunNotFoundError(f'no run "{run_id}" exists') from error
            raise
        status = description.status
        if status in (None, WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.CONTINUED_AS_NEW):
            return None
        return status.name

    return probe


def thread_run_probe(client: Client, task_queue: str, run_id: str, thread_id: str, resource_id: str) -> RunClosedProbe:
    """As :func:`run_closed_probe`, for a run its thread may still hold in its queue (no workflow yet)."""
    closed = run_closed_probe(client, run_id)

    async def probe() -> str | None:
        try:
            return await closed()
        except RunNotFoundError:
            view = await thread_view(client, task_queue, thread_id, resource_id)
            ended = [entry.status for entry in view.done if entry.run_id == run_id]
            if ended:
                return ended[-1]
            if any(entry.run_id == run_id for entry in (*view.active, *view.queued, *view.waiting)):
                return None  # queued: its workflow starts when its turn comes
            raise  # neither its workflow nor its thread knows it (erased, or never started)

    return probe
