"""Steering, interrupting and rolling back a run from a client (``App.steer``, ``App.interrupt``, ``App.rollback``).

The run decides (ARCHITECTURE.md, "Steering a running run"): a steer is the ``tempo_agents.steer`` update, answered
once a model step has the message (or, while the run waits for a person, once it is kept for the step after the
answer); an interrupt is the ``tempo_agents.interrupt`` signal. A rollback is done here: the run is cancelled, awaited
until closed, and its messages are removed from its memory thread; its journal is kept and says so.
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.client.forking import origin_input
from tempo_agents.client.update_resends import execute_update_resending
from tempo_agents.errors import RunFinishedError, RunNotFoundError
from tempo_agents.journal import constructors
from tempo_agents.models.messages import Message
from tempo_agents.store.base import ChunkWrite, Store
from tempo_agents.workflows.steering import (
    INTERRUPT,
    RUN_FINISHED,
    STEER,
    InterruptRequest,
    SteerAccepted,
    SteerRequest,
)

__all__ = [
    "ROLLED_BACK_CHUNK",
    "ROLLED_BACK_KEY",
    "RollbackResult",
    "interrupt_run",
    "rollback_run",
    "rolled_back",
    "steer_run",
]

ROLLED_BACK_CHUNK = "data-rolled-back"
"""The chunk a rolled-back run's journal ends with."""
ROLLED_BACK_KEY = "rolled-back"


@dataclass(frozen=True)
class RollbackResult:
    """What a rollback did: the run's thread (``None``: it had no memory) and how many of its messages left it."""

    run_id: str
    thread_id: str | None
    resource_id: str | None
    removed_messages: int
    status: str
    """How the run closed (``CANCELED``, or ``COMPLETED`` … when it had closed before the rollback)."""


async def steer_run(client: Client, run_id: str, message: Message, *, sent_by: str | None = None) -> SteerAccepted:
    """Deliver ``message`` into the running run ``run_id`` (the ``tempo_agents.steer`` update).

    Returns once the next model step has it (``delivered``), or at once while the run waits for a person
    (``kept``: the model sees it at the step after the answer). Raises :class:`RunFinishedError` when the run ends
    (or ended) without another model step: nothing was delivered, so the caller may start a new run with it."""
    handle = client.get_workflow_handle(run_id)
    request = SteerRequest(message=message, sent_by=sent_by)
    try:
        accepted = await execute_update_resending(
            handle, STEER, request, id=f"steer-{uuid.uuid4()}", result_type=SteerAccepted
        )
        return SteerAccepted.model_validate(accepted)
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.type == RUN_FINISHED:
            raise RunFinishedError(cause.message, run_id=run_id) from None
        raise
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            await _closed_or_missing(client, run_id)
        raise


async def interrupt_run(client: Client, run_id: str, *, by_run_id: str = "", requested_by: str | None = None) -> None:
    """Ask the run to stop at its next step boundary (at once while it waits for a person); it finishes with reason
    ``interrupted``, keeping what it did. Raises :class:`RunFinishedError` when the run has closed."""
    handle = client.get_workflow_handle(run_id)
    try:
        await handle.signal(INTERRUPT, InterruptRequest(by_run_id=by_run_id, requested_by=requested_by))
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            await _closed_or_missing(client, run_id)
        raise


async def rollback_run(client: Client, store: Store, run_id: str) -> RollbackResult:
    """Cancel the run, wait until it has closed, and remove the messages it added to its memory thread, so the next
    run on the thread does not see them. The journal is kept (the run's history) and ends with ``data-rolled-back``.

    A run that had closed already is rolled back the same way (its messages leave the thread)."""
    run_input = await origin_input(client, run_id)
    handle = client.get_workflow_handle(run_id)
    try:
        await handle.cancel()
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:  # NOT_FOUND: it has closed already
            raise
    with contextlib.suppress(WorkflowFailureError):  # cancelled, or failed before
        await handle.result()
    description = await handle.describe()
    status = description.status.name if description.status is not None else "UNKNOWN"
    memory = run_input.options.memory
    removed = 0
    if memory is not None:
        removed = await store.remove_run_from_thread(memory.thread, memory.resource, run_id)
    data = {
        "threadId": memory.thread if memory else None,
        "resourceId": memory.resource if memory else None,
        "removedMessages": removed,
    }
    await store.append_chunks(
        run_id, [ChunkWrite(constructors.data_chunk(run_id, ROLLED_BACK_CHUNK, data), ROLLED_BACK_KEY)]
    )
    return RollbackResult(
        run_id=run_id,
        thread_id=memory.thread if memory else None,
        resource_id=memory.resource if memory else None,
        removed_messages=removed,
        status=status,
    )


async def rolled_back(store: Store, run_id: str) -> dict[str, Any] | None:
    """What the rollback of ``run_id`` did (its ``data-rolled-back`` chunk's data), or ``None``: never rolled back.
    A run's streams end at its last ``finish``, before this chunk, so pages read it here."""
    offset = await store.offset_of(run_id, ROLLED_BACK_KEY)
    if offset is None:
        return None
    entries = await store.read_chunks(run_id, offset, 1)
    data = entries[0].chunk.get("data") if entries else None
    return data if isinstance(data, dict) else {}


async def _closed_or_missing(client: Client, run_id: str) -> None:
    """Raise the error a NOT_FOUND answer stands for: the run has closed, or there is no such run."""
    try:
        description = await client.get_workflow_handle(run_id).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise RunNotFoundError(f'no run "{run_id}" exists') from None
        raise
    if description.status not in (None, WorkflowExecutionStatus.RUNNING):
        raise RunFinishedError(
            f'run "{run_id}" has finished ({description.status.name.lower()}): start a new run with this message',
            run_id=run_id,
        )
