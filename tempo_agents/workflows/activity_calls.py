"""Running one of the run's activities as its options say: through the server, or local to the workflow task; how
they are cancelled, and what their failure says.

Pure workflow code: it only chooses between ``workflow.execute_activity`` and ``workflow.execute_local_activity``
(ARCHITECTURE.md, "Local activities").
"""

from __future__ import annotations

from typing import Any, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

from tempo_agents.activity_options import ActivityOptions

__all__ = ["LOCAL_ACTIVITIES", "WAIT_FOR_CANCELLATION", "execute", "failure_message"]

_R = TypeVar("_R")

LOCAL_ACTIVITIES = "local-activities"
"""Patch id: runs started before it ran every model step and tool call as an activity. It is asked only for an
activity whose options say ``local``, so histories without local activities carry no marker."""

WAIT_FOR_CANCELLATION = workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
"""How a run's model steps and tool calls are cancelled: a cancelled run journals ``abort`` only once its running
model step and tools have stopped."""


async def execute(
    activity: str,
    arg: Any,
    *,
    options: ActivityOptions,
    result_type: type[_R],
    cancellation_type: workflow.ActivityCancellationType,
    summary: str,
) -> _R:
    """Run ``activity`` with ``options``: a local activity when they say ``local``, else an activity."""
    if options.local and workflow.patched(LOCAL_ACTIVITIES):
        try:
            local_result: _R = await workflow.execute_local_activity(
                activity,
                arg,
                result_type=result_type,
                start_to_close_timeout=options.start_to_close_timeout,
                retry_policy=options.retry_policy(),
                cancellation_type=cancellation_type,
                summary=summary,
            )
        except ActivityError:
            raise
        except FailureError as failure:  # a local activity's failure can arrive bare: wrap it as an activity's is
            raise ActivityError(
                f"local activity {activity} failed",
                scheduled_event_id=0,
                started_event_id=0,
                identity="",
                activity_type=activity,
                activity_id="",
                retry_state=None,
            ) from failure
        return local_result
    result: _R = await workflow.execute_activity(
        activity,
        arg,
        result_type=result_type,
        start_to_close_timeout=options.start_to_close_timeout,
        heartbeat_timeout=options.heartbeat_timeout,
        cancellation_type=cancellation_type,
        retry_policy=options.retry_policy(),
        summary=summary,
    )
    return result


def failure_message(error: ActivityError) -> str:
    """What an activity's failure says: the message of the application error at its root."""
    cause: BaseException | None = error.cause
    while isinstance(cause, ActivityError) and cause.cause is not None:
        cause = cause.cause
    if isinstance(cause, ApplicationError):
        return cause.message
    return str(cause or error)
