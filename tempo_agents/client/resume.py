"""Answering a waiting run from a client: the request, the exact error texts, the update and the resumed stream.

Every way to answer a call (``App.resume_stream`` and its siblings, ``Agent.resume_generate``, the HTTP routes,
the dashboard) builds a :class:`ResumeRequest` and sends it through :func:`send_resume`, through ``App.answer``.
A caller that has read the call it answers (the HTTP server, an answer link) hands it down, and the answerer is
checked against its approvers before anything is sent; the run checks again, as the authority.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable
from typing import Protocol

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.approvals import may_answer, not_an_approver_text
from tempo_agents.client.update_resends import execute_update_resending
from tempo_agents.errors import ResumeError, ResumeValidationError
from tempo_agents.store.base import Store
from tempo_agents.streams import AgentStream, Follow
from tempo_agents.workflows import resume_errors
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW
from tempo_agents.workflows.payloads import PendingCall, ResumeAccepted, ResumeRequest

__all__ = [
    "ANSWER_METHODS",
    "AnsweringClient",
    "check_answerer",
    "resume_error_text",
    "resume_update_id",
    "send_resume",
    "stream_after",
]

ANSWER_METHODS = {"resume": "resume_stream", "approve": "approve_tool_call", "decline": "decline_tool_call"}
"""The Python method each action is named by in the texts of refused answers (``Agent "a" resume_stream() ...``)."""


class AnsweringClient(Protocol):
    """What answering a run needs of the App: its Temporal client, its store and a way to follow a journal."""

    @property
    def client(self) -> Client: ...

    @property
    def store(self) -> Store: ...

    def attach(self, run_id: str, *, offset: int = 0, follow: Follow = "segment") -> AgentStream: ...


def resume_error_text(code: str, *, agent_name: str, method: str, run_id: str, tool_call_id: str | None) -> str:
    """The texts of refused resumes, as the HTTP API and the Python API both word them."""
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


def resume_update_id(idempotency_key: str) -> str:
    """The id of the run's ``resume`` update that carries the answer with this key: the same key, the same update,
    which Temporal answers once."""
    return f"resume:{idempotency_key}"


def check_answerer(waiting: PendingCall, answered_by: str | None, groups: Iterable[str]) -> None:
    """Raise the run's own refusal (:class:`ResumeError`, ``NOT_AN_APPROVER``) when ``answered_by``, a member of
    ``groups``, may not answer the call as it waits."""
    if not may_answer(waiting.approvers, answered_by, groups):
        text = not_an_approver_text(waiting.tool_call_id, waiting.approvers)
        raise ResumeError(text, code=resume_errors.NOT_AN_APPROVER)


async def send_resume(
    app: AnsweringClient,
    run_id: str,
    request: ResumeRequest,
    *,
    agent_id: str,
    agent_name: str,
    method: str,
    idempotency_key: str | None = None,
    waiting: PendingCall | None = None,
) -> AgentStream:
    """Send the ``resume`` update and follow the resumed segment.

    The workflow decides (its validator checks the call and the data against the call's resume schema),
    so the client sends the update directly. Every caller's update has its own id: when several callers
    answer the same call at once, exactly one is accepted and the others are told it is not suspended.
    A caller retrying the same request passes the same ``idempotency_key`` and gets the first outcome.
    ``waiting``: the call as the caller read it, whose approvers the answerer is checked against first.
    """

    def refuse(code: str, tool_call_id: str | None = request.tool_call_id) -> ResumeError:
        text = resume_error_text(code, agent_name=agent_name, method=method, run_id=run_id, tool_call_id=tool_call_id)
        return ResumeError(text, code=code)

    if waiting is not None:
        check_answerer(waiting, request.answered_by, request.answered_by_groups)
    handle = app.client.get_workflow_handle(run_id)
    request = request.model_copy(update={"agent_id": agent_id})
    update_id = resume_update_id(idempotency_key or str(uuid.uuid4()))
    try:
        accepted = await execute_update_resending(handle, "resume", request, id=update_id, result_type=ResumeAccepted)
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.type == resume_errors.INVALID_ARGS and cause.details:
            raise ResumeValidationError(cause.message, cause.details[0]) from None
        if isinstance(cause, ApplicationError) and cause.type in resume_errors.WORDED_BY_THE_RUN:
            raise ResumeError(cause.message, code=cause.type) from None  # names who may answer, or what is wrong
        if isinstance(cause, ApplicationError) and cause.type == resume_errors.INVALID_RESUME_DATA:
            details = cause.details[0] if cause.details else {"error": True, "message": cause.message}
            raise ResumeValidationError(cause.message, details) from None
        if isinstance(cause, ApplicationError) and cause.type:
            raise refuse(cause.type) from None
        raise
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise
        raise refuse(await _why_not_found(app.client, run_id)) from None
    stream = await stream_after(app, run_id, accepted)
    assert stream is not None  # no limit on the attempts
    return stream


async def stream_after(
    app: AnsweringClient, run_id: str, accepted: ResumeAccepted, *, attempts: int | None = None
) -> AgentStream | None:
    """The run's stream from the chunk after the accepted answer's; ``None`` when the journal does not show that
    chunk after ``attempts`` looks (it is written before the update returns; a replica may lag a moment)."""
    offset = await app.store.offset_of(run_id, accepted.after_key)
    looked = 1
    while offset is None:
        if attempts is not None and looked >= attempts:
            return None
        await asyncio.sleep(0.02)
        offset = await app.store.offset_of(run_id, accepted.after_key)
        looked += 1
    return app.attach(run_id, offset=offset + 1)


async def _why_not_found(client: Client, run_id: str) -> str:
    """An update to a run that is closed, or that does not exist: which one (only on this error path)."""
    try:
        description = await client.get_workflow_handle(run_id).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return resume_errors.NO_SNAPSHOT_FOUND
        raise
    if description.workflow_type != AGENT_RUN_WORKFLOW:
        return resume_errors.NO_SNAPSHOT_FOUND
    return resume_errors.NOT_SUSPENDED
