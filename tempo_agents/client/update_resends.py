"""Sending a workflow update again when the server drops it unprocessed.

When a worker takes over a run whose worker was lost, the workflow task that carried an update can end without the
workflow seeing the update; the server then rejects it with the failure type ``UnprocessedUpdate``. Nothing was
delivered (the update is not in the run's history), so sending it again cannot apply it twice. Every caller that
sends an update a person or a client is waiting on (resume, steer, budget answers) goes through
:func:`execute_update_resending`, so none of them reports a lost worker as a refusal.
"""

from __future__ import annotations

from typing import Any, TypeVar

from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

__all__ = ["UNPROCESSED_RESENDS", "UNPROCESSED_UPDATE", "execute_update_resending"]

T = TypeVar("T")

UNPROCESSED_UPDATE = "UnprocessedUpdate"
"""The failure type of an update the server rejected because the workflow task that carried it ended without the
workflow seeing it (seen when a new worker takes over a run whose worker was killed): nothing was delivered."""

UNPROCESSED_RESENDS = 5
"""How many times an update is sent in all while the server keeps rejecting it unprocessed."""


def _unprocessed(error: WorkflowUpdateFailedError) -> bool:
    """Whether the server dropped the update before the workflow saw it."""
    cause = error.cause
    return isinstance(cause, ApplicationError) and cause.type == UNPROCESSED_UPDATE


async def execute_update_resending(
    handle: WorkflowHandle[Any, Any], update: str, arg: Any, *, id: str, result_type: type[T]
) -> T:
    """``handle.execute_update(update, arg, id=id, result_type=result_type)``, sent again (up to
    :data:`UNPROCESSED_RESENDS` times in all) while the server rejects it unprocessed. A resend carries an id of its
    own (``<id>~2``, ``<id>~3`` …): the dropped one is not in the run's history, so nothing is answered twice."""
    for sent in range(1, UNPROCESSED_RESENDS + 1):
        try:
            update_id = id if sent == 1 else f"{id}~{sent}"
            result: T = await handle.execute_update(update, arg, id=update_id, result_type=result_type)
            return result
        except WorkflowUpdateFailedError as error:
            if _unprocessed(error) and sent < UNPROCESSED_RESENDS:
                continue
            raise
    raise AssertionError("unreachable: the last send returns or raises")
