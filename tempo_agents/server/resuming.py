"""Resuming, approving and declining over HTTP, safely retried.

The official client retries a request whose answer it did not get (a 5xx, a dropped connection), so
the same resume may arrive twice. Each request gets an idempotency key made of what identifies it: the
run, the tool call it names, the round of that call (a call may suspend again after a resume), the
action, the data, the reason and the caller's ``Idempotency-Key``/``X-Request-Id`` header when sent.
The key becomes the id of the run's ``resume`` update, so Temporal answers a repeated request with the
first outcome instead of resuming twice, while a different answer to the same call is refused
(exactly one of two racing callers wins).

The round comes from the run's ``pending`` query, read once per answer (a caller that read it already, an answer
link, hands it down), and the call it names goes with the answer: the client checks the answerer against its
approvers before it sends. When the call no longer waits, the request may be a retry of one that was accepted: the
earlier rounds' updates are looked up by their ids, and the latest one found answers again. Once the answer is
accepted the client ends the call's wait in the store (``activities/kept_answer.py``), so listings leave it out.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from starlette.requests import Request
from temporalio.client import WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.agent.agent import Agent
from tempo_agents.client.answers import answer_call
from tempo_agents.client.app import App
from tempo_agents.client.resume import resume_error_text, resume_update_id, stream_after
from tempo_agents.errors import ConfigurationError
from tempo_agents.server.access.hidden import is_hidden
from tempo_agents.server.auth import principal, principal_groups
from tempo_agents.server.dependencies import request_id
from tempo_agents.server.errors import ApiError, resume_error_status
from tempo_agents.streams import AgentStream
from tempo_agents.workflows import resume_errors, search_attributes
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW
from tempo_agents.workflows.payloads import PendingCall, ResumeAccepted, ResumeRequest

__all__ = [
    "ResumeAction",
    "ResumeCommand",
    "check_followable",
    "describe_run",
    "http_command",
    "idempotency_key",
    "resume_run",
    "run_owner",
]

ResumeAction = Literal["resume", "approve", "decline"]

_METHODS: dict[ResumeAction, str] = {
    "resume": "resumeStream",
    "approve": "approveToolCall",
    "decline": "declineToolCall",
}
_ROUNDS_LOOKED_UP = 8
_LOOKUP_TIMEOUT = timedelta(seconds=5)
_OFFSET_LOOKS = 101
"""How often the journal is read for where an accepted answer's stream starts (every 20 ms) before a 409."""


@dataclass(frozen=True)
class ResumeCommand:
    """One resume, approval or decline of a run's waiting call."""

    action: ResumeAction
    run_id: str
    tool_call_id: str | None = None
    data: Any = None
    reason: str | None = None
    request_id: str | None = None
    """The caller's own idempotency key (a header), when it sent one."""
    answered_by: str | None = None
    """The principal that sends it (its token's name), recorded with the answer."""
    answered_by_groups: tuple[str, ...] = ()
    """The groups the principal belongs to (the server's ``groups``)."""
    args: Any = None
    """An approval with arguments the approver changed (``None``: as the model made them)."""
    round: int | None = None
    """Answers only this round of the call (an answer link's)."""

    def request(self) -> ResumeRequest:
        """The ``resume`` update's request: the data only for a resume, the reason only for a decline, changed
        arguments only for an approval."""
        data = self.data if self.action == "resume" else None
        reason = self.reason if self.action == "decline" else None
        return ResumeRequest(
            action=self.action,
            data=data,
            tool_call_id=self.tool_call_id,
            reason=reason,
            answered_by=self.answered_by,
            answered_by_groups=list(self.answered_by_groups),
            args=self.args if self.action == "approve" else None,
            round=self.round,
        )


def http_command(
    request: Request,
    action: ResumeAction,
    run_id: str,
    tool_call_id: str | None,
    *,
    data: Any = None,
    reason: str | None = None,
    args: Any = None,
) -> ResumeCommand:
    """The command an HTTP request sends: its ``Idempotency-Key``/``X-Request-Id``, its token's principal and the
    principal's groups."""
    return ResumeCommand(
        action,
        run_id,
        tool_call_id,
        data=data,
        reason=reason,
        request_id=request_id(request),
        answered_by=principal(request),
        answered_by_groups=tuple(principal_groups(request)),
        args=args,
    )


def idempotency_key(command: ResumeCommand, call_round: int) -> str:
    """The key that makes a repeated request resume once: the same request in the same round, the same key.

    A caller that sends its own request id is identified by it alone (with the run, call and answer),
    whatever round the call is in by the time a retry arrives.
    """
    if command.request_id is not None:
        call_round = 0
    material = json.dumps(
        [
            command.run_id,
            command.tool_call_id or "",
            call_round,
            command.action,
            command.data,
            command.reason,
            command.request_id or "",
            command.answered_by or "",
            *([] if command.args is None else [command.args]),  # keys of answers without changes stay as they were
        ],
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return "http-" + hashlib.sha256(material.encode()).hexdigest()[:40]


async def describe_run(
    app: App, run_id: str, *, resuming: tuple[str, str] | None = None
) -> WorkflowExecutionDescription:
    """The run's workflow description; an unknown run is a 404.

    ``resuming=(agent name, method)`` words the 404 as the reference does for a resume of an unknown run.
    """
    description = None  # another tenant's run does not exist for this request (``server/access/``)
    try:
        if not is_hidden(run_id):
            description = await app.client.get_workflow_handle(run_id).describe()
    except RPCError as error:
        if error.status not in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            raise
        description = None  # no such run, or an id no run can have (empty, too long)
    if description is not None and description.workflow_type == AGENT_RUN_WORKFLOW:
        return description
    if resuming is None:
        raise ApiError(404, f'no run "{run_id}" exists')
    agent_name, method = resuming
    text = resume_error_text(
        resume_errors.NO_SNAPSHOT_FOUND, agent_name=agent_name, method=method, run_id=run_id, tool_call_id=None
    )
    raise ApiError(404, text, code=resume_errors.NO_SNAPSHOT_FOUND)


async def check_followable(app: App, run_id: str) -> None:
    """A 404 as :func:`describe_run`'s, unless the run exists or its thread queues it: a queued run has no workflow
    until its turn comes, and its stream waits for it."""
    await run_owner(app, run_id)


async def run_owner(app: App, run_id: str) -> str:
    """The id of the agent a run belongs to, for a run that exists or that its thread queues (its entry's agent); a
    404 as :func:`describe_run`'s for any other."""
    try:
        description = await describe_run(app, run_id)
    except ApiError as error:
        queued = None if error.status != 404 or is_hidden(run_id) else await app.queued_run(run_id)
        if queued is None:
            raise
        return queued.entry.agent_id
    return run_agent(app, description).id


def run_agent(app: App, description: WorkflowExecutionDescription) -> Agent:
    """The agent a run belongs to (from its search attribute)."""
    agent_id = description.typed_search_attributes.get(search_attributes.AGENT_ID)
    try:
        return app.agent(agent_id or "")
    except ConfigurationError:
        raise ApiError(404, f"Agent with id {agent_id} not found") from None


def _target(pending: list[PendingCall], tool_call_id: str | None) -> PendingCall | None:
    if tool_call_id is not None:
        return next((call for call in pending if call.tool_call_id == tool_call_id), None)
    return pending[0] if len(pending) == 1 else None


async def _earlier_answer(app: App, command: ResumeCommand) -> ResumeAccepted | None:
    """What this very request was answered before, if it was accepted already (the latest round's)."""
    handle = app.client.get_workflow_handle(command.run_id)

    async def accepted(call_round: int) -> ResumeAccepted | None:
        update_id = resume_update_id(idempotency_key(command, call_round))
        update = handle.get_update_handle(update_id, result_type=ResumeAccepted)
        try:
            answer: ResumeAccepted = await update.result(rpc_timeout=_LOOKUP_TIMEOUT)
        except Exception:
            return None
        return answer

    rounds = [0] if command.request_id is not None else list(range(_ROUNDS_LOOKED_UP))
    found = [answer for answer in await asyncio.gather(*(accepted(r) for r in rounds)) if answer is not None]
    return found[-1] if found else None


async def _stream_after(app: App, run_id: str, answer: ResumeAccepted) -> AgentStream:
    stream = await stream_after(app, run_id, answer, attempts=_OFFSET_LOOKS)
    if stream is None:
        raise ApiError(409, f'run "{run_id}" was resumed, but its journal does not show where yet; try again')
    return stream


async def resume_run(
    app: App, agent: Agent | None, command: ResumeCommand, *, pending: Sequence[PendingCall] | None = None
) -> tuple[Agent, AgentStream]:
    """Send the resume (once, however often the request is repeated) and return the resumed stream.

    ``agent=None`` takes the run's own agent. ``pending``: the run's waiting calls as the caller just read them
    (``None``: read here). Refusals raise :class:`ApiError` with a 4xx status (or the client's
    :class:`ResumeError`, which ``api_error_from`` words).
    """
    method = _METHODS[command.action]
    description = await describe_run(app, command.run_id, resuming=(agent.name if agent else "", method))
    owner = run_agent(app, description)
    if agent is not None and owner.id != agent.id:
        text = resume_error_text(
            resume_errors.AGENT_MISMATCH, agent_name=agent.name, method=method, run_id=command.run_id, tool_call_id=None
        )
        raise ApiError(resume_error_status(resume_errors.AGENT_MISMATCH), text, code=resume_errors.AGENT_MISMATCH)
    agent = owner
    target: PendingCall | None = None
    if pending is not None:
        target = _target(list(pending), command.tool_call_id)
    elif description.status == WorkflowExecutionStatus.RUNNING:
        target = _target(await app.pending(command.run_id), command.tool_call_id)
    if target is None:
        earlier = await _earlier_answer(app, command)
        if earlier is not None:
            return agent, await _stream_after(app, command.run_id, earlier)
    # A call the run does not wait on is still asked about: the workflow refuses it with the exact reason.
    key = idempotency_key(command, target.round if target is not None else 0)
    request = command.request()
    stream = await answer_call(app, command.run_id, request, agent_id=agent.id, idempotency_key=key, waiting=target)
    return agent, stream
