"""How a stream that follows a run's journal learns that the run has closed, when the journal says nothing more:
the probes :class:`AgentStream` asks after a while without chunks."""

from __future__ import annotations

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.errors import RunNotFoundError
from tempo_agents.store.base import Store
from tempo_agents.streams import RunClosedProbe
from tempo_agents.threads import queued_run, thread_view

__all__ = ["NOT_KNOWN_NOW", "attached_run_probe", "run_closed_probe", "thread_run_probe"]

NOT_KNOWN_NOW = frozenset(
    {
        RPCStatusCode.CANCELLED,  # the client's own deadline ("Timeout expired")
        RPCStatusCode.DEADLINE_EXCEEDED,  # a query the worker did not answer in time
        RPCStatusCode.UNAVAILABLE,
        RPCStatusCode.RESOURCE_EXHAUSTED,
    }
)
"""The answers that say Temporal could not tell now (unreachable, busy, a loaded worker's query timing out), not
that anything is wrong with the run: the probe answers ``None`` (not known to have closed) and the stream asks again
after its next quiet interval, instead of failing a run that goes on."""


def run_closed_probe(client: Client, run_id: str) -> RunClosedProbe:
    """The run's closing status from its workflow (``None`` while it runs); a run that does not exist raises
    :class:`RunNotFoundError`."""

    async def probe() -> str | None:
        try:
            description = await client.get_workflow_handle(run_id).describe()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                raise RunNotFoundError(f'no run "{run_id}" exists') from error
            if error.status in NOT_KNOWN_NOW:
                return None
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
            try:
                view = await thread_view(client, task_queue, thread_id, resource_id)
            except RPCError as error:
                if error.status in NOT_KNOWN_NOW:
                    return None
                raise
            ended = [entry.status for entry in view.done if entry.run_id == run_id]
            if ended:
                return ended[-1]
            if any(entry.run_id == run_id for entry in (*view.active, *view.queued, *view.waiting)):
                return None  # queued: its workflow starts when its turn comes
            raise  # neither its workflow nor its thread knows it (erased, or never started)

    return probe


def attached_run_probe(client: Client, store: Store, run_id: str) -> RunClosedProbe:
    """As :func:`run_closed_probe`, for a run known by its id alone: one its workflow does not know may be queued on a
    thread (its sender kept the thread's address, ``threads/queued_runs.py``), and is then followed through it."""
    closed = run_closed_probe(client, run_id)
    through_thread: RunClosedProbe | None = None

    async def probe() -> str | None:
        nonlocal through_thread
        if through_thread is not None:
            return await through_thread()
        try:
            return await closed()
        except RunNotFoundError:
            try:
                queued = await queued_run(client, store, run_id)
            except RPCError as error:
                if error.status in NOT_KNOWN_NOW:
                    return None
                raise
            if queued is None:
                raise
            place = queued.place
            through_thread = thread_run_probe(client, place.task_queue, run_id, place.thread_id, place.resource_id)
            return await through_thread()

    return probe
