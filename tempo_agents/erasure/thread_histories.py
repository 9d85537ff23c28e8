"""The runs a thread's workflow holds, read from its history: the ones it started and the messages waiting their turn.

A thread starts a queued run as soon as its active run ends or yields, so a run may begin after an erasure listed the
scope's executions; Temporal's list filter shows such a run only a moment later (seconds on a busy server). The
thread's own history has it at once: the messages it was sent (``SEND_UPDATE``), the queue and waiting runs it
carried into this run of its workflow (its input), the runs it started. An erasure reads it before it deletes the
thread, so every run the thread could still start is known by id."""

from __future__ import annotations

from collections.abc import Iterable

from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from tempo_agents.workflows.thread_payloads import SEND_UPDATE, ThreadMessage, ThreadState

__all__ = ["thread_run_ids"]


async def thread_run_ids(client: Client, workflow_id: str, run_id: str) -> list[str]:
    """The ids of the runs the thread's execution was sent, carried or started (each once, in the order met)."""
    history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
    found: dict[str, None] = {}
    for event in history.events:
        found.update(dict.fromkeys(await _run_ids(client, event)))
    return list(found)


async def _run_ids(client: Client, event: HistoryEvent) -> Iterable[str]:
    if event.HasField("workflow_execution_started_event_attributes"):
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        (state,) = await client.data_converter.decode(payloads, [ThreadState])
        return [run.run_input.run_id for run in (*state.queue, *state.waiting)]
    if event.HasField("workflow_execution_update_accepted_event_attributes"):
        update = event.workflow_execution_update_accepted_event_attributes.accepted_request.input
        if update.name != SEND_UPDATE:
            return []
        (message,) = await client.data_converter.decode(update.args.payloads, [ThreadMessage])
        return [message.run.run_input.run_id]
    if event.HasField("start_child_workflow_execution_initiated_event_attributes"):
        return [event.start_child_workflow_execution_initiated_event_attributes.workflow_id]
    return []
