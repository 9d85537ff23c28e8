"""Resuming a waiting run from a client: checks, the exact error texts, the update and the stream."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.agent.stream import AgentStream
from tempo_agents.errors import ResumeError, ResumeValidationError
from tempo_agents.workflows import resume_errors
from tempo_agents.workflows.payloads import ResumeAccepted, ResumeRequest

if TYPE_CHECKING:
    from tempo_agents.agent.agent import Agent
    from tempo_agents.agent.app import App


def resume_error_text(code: str, *, agent_name: str, method: str, run_id: str, tool_call_id: str | None) -> str:
    """The texts of refused resumes (word for word: clients of the HTTP API match on them)."""
    if code == resume_errors.NO_SNAPSHOT_FOUND:
        return (
            f'Agent "{agent_name}" {method}() could not find a suspended run for runId "{run_id}". '
            "The run may have already completed, never suspended, or the runId is invalid. "
            f"Ensure you are calling {method}() only with a runId from a currently-suspended run."
        )
    if code == resume_errors.NOT_SUSPENDED:
        return f'Agent "{agent_name}" {method}() cannot resume runId "{run_id}" because it is not suspended.'
    if code == resume_errors.AMBIGUOUS_TOOL_CALL:
        return f'Agent "{agent_name}" requires an exact toolCallId to resume runId "{run_id}".'
    if code == resume_errors.TOOL_CALL_NOT_SUSPENDED:
        return f'Agent "{agent_name}" cannot resume tool call "{tool_call_id}" because it is not suspended.'
    if code == resume_errors.AGENT_MISMATCH:
        return f'Agent "{agent_name}" {method}() cannot resume runId "{run_id}": the run belongs to another agent.'
    if code == resume_errors.INVALID_APPROVAL:
        return (
            f'Agent "{agent_name}" {method}(): tool call "{tool_call_id}" waits for approval; '
            'answer it with {"approved": true} or {"approved": false}.'
        )
    return f'Agent "{agent_name}" {method}() could not resume runId "{run_id}" ({code}).'


async def send_resume(
    app: App,
    agent: Agent,
    method: str,
    run_id: str,
    request: ResumeRequest,
    *,
    idempotency_key: str | None = None,
) -> AgentStream:
    """Send the ``resume`` update and follow the resumed segment.

    The workflow decides (its validator checks the call and the data against the call's resume schema),
    so the client sends the update directly. Every caller's update has its own id: when several callers
    answer the same call at once, exactly one is accepted and the others are told it is not suspended.
    A caller retrying the same request passes the same ``idempotency_key`` and gets the first outcome.
    """

    def refuse(code: str, tool_call_id: str | None = request.tool_call_id) -> ResumeError:
        text = resume_error_text(code, agent_name=agent.name, method=method, run_id=run_id, tool_call_id=tool_call_id)
        return ResumeError(text, code=code)

    handle = app.client.get_workflow_handle(run_id)
    request = request.model_copy(update={"agent_id": agent.id})
    try:
        accepted = await handle.execute_update(
            "resume",
            request,
            id=f"resume:{idempotency_key or uuid.uuid4()}",
            result_type=ResumeAccepted,
        )
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.type == resume_errors.INVALID_RESUME_DATA:
            details = cause.details[0] if cause.details else {"error": True, "message": cause.message}
            raise ResumeValidationError(cause.message, details) from None
        if isinstance(cause, ApplicationError) and cause.type:
            raise refuse(cause.type) from None
        raise
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise
        raise refuse(await _why_not_found(app, run_id)) from None
    offset = await app.store.offset_of(run_id, accepted.after_key)
    while offset is None:  # written before the update returned; a replica may lag a moment
        await asyncio.sleep(0.02)
        offset = await app.store.offset_of(run_id, accepted.after_key)
    return app.attach(run_id, offset=offset + 1)


async def _why_not_found(app: App, run_id: str) -> str:
    """An update to a run that is closed, or that does not exist: which one (only on this error path)."""
    try:
        description = await app.client.get_workflow_handle(run_id).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return resume_errors.NO_SNAPSHOT_FOUND
        raise
    if description.workflow_type != "AgentRunWorkflow":
        return resume_errors.NO_SNAPSHOT_FOUND
    return resume_errors.NOT_SUSPENDED


def resume_request(
    action: str,
    data: Any = None,
    tool_call_id: str | None = None,
    reason: str | None = None,
    *,
    answered_by: str | None = None,
) -> ResumeRequest:
    return ResumeRequest.model_validate(
        {"toolCallId": tool_call_id, "action": action, "data": data, "reason": reason, "answeredBy": answered_by}
    )
