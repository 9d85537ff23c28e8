"""Resuming a waiting run from a client: checks, the exact error texts, the update and the stream."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from temporalio.client import WorkflowExecutionStatus, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.agent.stream import AgentStream
from tempo_agents.errors import ResumeError, ResumeValidationError
from tempo_agents.tools._validation import validate_resume_data
from tempo_agents.workflows import resume_errors
from tempo_agents.workflows.payloads import PendingCall, ResumeAccepted, ResumeRequest

if TYPE_CHECKING:
    from tempo_agents.agent.agent import Agent
    from tempo_agents.agent.app import App


def resume_error_text(code: str, *, agent_name: str, method: str, run_id: str, tool_call_id: str | None) -> str:
    """The reference's texts for refused resumes (§3.3)."""
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


async def send_resume(app: App, agent: Agent, method: str, run_id: str, request: ResumeRequest) -> AgentStream:
    """Check the run and the data, send the ``resume`` update, and follow the resumed segment."""

    def refuse(code: str, tool_call_id: str | None = request.tool_call_id) -> ResumeError:
        text = resume_error_text(code, agent_name=agent.name, method=method, run_id=run_id, tool_call_id=tool_call_id)
        return ResumeError(text, code=code)

    handle = app.client.get_workflow_handle(run_id)
    try:
        description = await handle.describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise refuse(resume_errors.NO_SNAPSHOT_FOUND) from None
        raise
    if description.workflow_type != "AgentRunWorkflow":
        raise refuse(resume_errors.NO_SNAPSHOT_FOUND)
    if description.status != WorkflowExecutionStatus.RUNNING:
        raise refuse(resume_errors.NOT_SUSPENDED)
    pending = await handle.query("pending", result_type=list[PendingCall])
    target = _choose(pending, request.tool_call_id)
    if target is None:
        if not pending:
            raise refuse(resume_errors.NOT_SUSPENDED)
        if request.tool_call_id is None:
            raise refuse(resume_errors.AMBIGUOUS_TOOL_CALL)
        raise refuse(resume_errors.TOOL_CALL_NOT_SUSPENDED)
    if not target.requires_approval and request.action == "resume":
        tool = agent.tools.get(target.tool_name)
        if tool is not None:
            _, failure = validate_resume_data(tool.id, tool.resume_schema, request.data)
            if failure is not None:
                raise ResumeValidationError(failure.message, failure.to_result())
    request = ResumeRequest(
        tool_call_id=target.tool_call_id, action=request.action, data=request.data, reason=request.reason
    )
    try:
        accepted = await handle.execute_update(
            "resume",
            request,
            id=f"resume:{target.tool_call_id}:{target.round}",
            result_type=ResumeAccepted,
        )
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.type:
            raise refuse(cause.type, target.tool_call_id) from None
        raise
    offset = await app.store.offset_of(run_id, accepted.after_key)
    while offset is None:  # written before the update returned; a replica may lag a moment
        await asyncio.sleep(0.02)
        offset = await app.store.offset_of(run_id, accepted.after_key)
    return app.attach(run_id, offset=offset + 1)


def _choose(pending: list[PendingCall], tool_call_id: str | None) -> PendingCall | None:
    if tool_call_id is None:
        return pending[0] if len(pending) == 1 else None
    return next((call for call in pending if call.tool_call_id == tool_call_id), None)


def resume_request(
    action: str, data: Any = None, tool_call_id: str | None = None, reason: str | None = None
) -> ResumeRequest:
    return ResumeRequest.model_validate({"toolCallId": tool_call_id, "action": action, "data": data, "reason": reason})
