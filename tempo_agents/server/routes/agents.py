"""Agent routes: listings, runs as SSE or JSON, resume/approve/decline, suspended runs and ``observe``.

Every check that can be the caller's fault (unknown agent, bad body, unknown or not-suspended run,
ambiguous call, invalid resume data) is answered with a 4xx before any work starts. Once a run has
started or resumed, the response is a 200 stream and later failures arrive as chunks. A run does not
depend on its HTTP connection: a client that goes away leaves it running, and ``observe`` (or
``GET /runs/:runId/stream``) picks it up again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.responses import StreamingResponse

from tempo_agents.agent.agent import Agent
from tempo_agents.server.access.visibility import scoped
from tempo_agents.server.audit.intents import note_audit
from tempo_agents.server.auth import principal
from tempo_agents.server.bodies import ApproveBody, DeclineBody, ObserveBody, ResumeBody, StreamBody
from tempo_agents.server.dependencies import PRINTABLE, AppDep, RequestContextDep, find_agent
from tempo_agents.server.errors import ApiError
from tempo_agents.server.pending_view import iso, shown_call
from tempo_agents.server.resuming import (
    ResumeCommand,
    http_command,
    resume_run,
    run_owner,
)
from tempo_agents.server.run_start import start_request, start_run, thread_headers
from tempo_agents.server.shapes import agent_details, chunk_wire, full_output
from tempo_agents.server.sse import SSE_RESPONSES, EventStream, stream_response

__all__ = ["router"]

CONTINUATION_SKIPS = frozenset({"start"})
"""A resumed segment's journal opens with ``start``; the reference's continuations have none."""

router = APIRouter(prefix="/agents", tags=["agents"])


@router.get("", summary="Every agent, keyed by agent id")
async def list_agents(
    app: AppDep, _: RequestContextDep, partial: Annotated[bool, Query(description="omit tool schemas")] = False
) -> dict[str, Any]:
    return {agent.id: agent_details(agent, partial=partial, with_id=True) for agent in app.agents}


@router.get("/{agent_id}", summary="One agent")
async def get_agent(app: AppDep, agent_id: str, _: RequestContextDep) -> dict[str, Any]:
    return agent_details(find_agent(app, agent_id))


@router.post(
    "/{agent_id}/stream",
    summary="Start a run and stream its chunks (SSE)",
    response_class=EventStream,
    responses=SSE_RESPONSES,
)
async def stream(app: AppDep, agent_id: str, body: StreamBody, request: Request) -> StreamingResponse:
    agent = find_agent(app, agent_id)
    started = await start_run(app, agent, start_request(app, agent, body), principal(request))
    await note_audit(request, target=started.run_id)
    return stream_response(started, chunk_wire, headers=thread_headers(started))


@router.post("/{agent_id}/generate", summary="Start a run and answer with its result")
async def generate(app: AppDep, agent_id: str, body: StreamBody, request: Request) -> dict[str, Any]:
    agent = find_agent(app, agent_id)
    started = await start_run(app, agent, start_request(app, agent, body), principal(request))
    await note_audit(request, target=started.run_id)
    return full_output(await started.result())


@router.post(
    "/{agent_id}/resume-stream",
    summary="Resume a suspended call and stream the continuation (SSE)",
    response_class=EventStream,
    responses=SSE_RESPONSES,
)
async def resume_stream(app: AppDep, agent_id: str, body: ResumeBody, request: Request) -> StreamingResponse:
    command = http_command(request, "resume", body.run_id, body.tool_call_id, data=body.resume_data)
    _, resumed = await resume_run(app, find_agent(app, agent_id), command)
    return stream_response(resumed, chunk_wire, skip=CONTINUATION_SKIPS)


@router.post(
    "/{agent_id}/approve-tool-call",
    summary="Approve a call and stream the continuation (SSE)",
    response_class=EventStream,
    responses=SSE_RESPONSES,
)
async def approve(app: AppDep, agent_id: str, body: ApproveBody, request: Request) -> StreamingResponse:
    _, resumed = await resume_run(app, find_agent(app, agent_id), _approval(body, request))
    return stream_response(resumed, chunk_wire, skip=CONTINUATION_SKIPS)


@router.post(
    "/{agent_id}/decline-tool-call",
    summary="Decline a call and stream the continuation (SSE)",
    response_class=EventStream,
    responses=SSE_RESPONSES,
)
async def decline(app: AppDep, agent_id: str, body: DeclineBody, request: Request) -> StreamingResponse:
    _, resumed = await resume_run(app, find_agent(app, agent_id), _decline(body, request))
    return stream_response(resumed, chunk_wire, skip=CONTINUATION_SKIPS)


@router.post("/{agent_id}/approve-tool-call-generate", summary="Approve a call and answer with the result")
async def approve_generate(app: AppDep, agent_id: str, body: ApproveBody, request: Request) -> dict[str, Any]:
    _, resumed = await resume_run(app, find_agent(app, agent_id), _approval(body, request))
    return full_output(await resumed.result())


@router.post("/{agent_id}/decline-tool-call-generate", summary="Decline a call and answer with the result")
async def decline_generate(app: AppDep, agent_id: str, body: DeclineBody, request: Request) -> dict[str, Any]:
    _, resumed = await resume_run(app, find_agent(app, agent_id), _decline(body, request))
    return full_output(await resumed.result())


def _approval(body: ApproveBody, request: Request) -> ResumeCommand:
    if not body.tool_call_id:
        raise ApiError(400, "Tool call id is required")
    return http_command(request, "approve", body.run_id, body.tool_call_id, args=body.args)


def _decline(body: DeclineBody, request: Request) -> ResumeCommand:
    if not body.tool_call_id:
        raise ApiError(400, "Tool call id is required")
    return http_command(request, "decline", body.run_id, body.tool_call_id, reason=body.reason)


@router.get("/{agent_id}/suspended-runs", summary="This agent's runs that wait for a person")
async def suspended_runs(
    app: AppDep,
    request: Request,
    agent_id: str,
    _: RequestContextDep,
    thread_id: Annotated[str | None, Query(alias="threadId", pattern=PRINTABLE)] = None,
    resource_id: Annotated[str | None, Query(alias="resourceId", pattern=PRINTABLE)] = None,
    from_date: Annotated[datetime | None, Query(alias="fromDate")] = None,
    to_date: Annotated[datetime | None, Query(alias="toDate")] = None,
    per_page: Annotated[int | None, Query(alias="perPage", ge=1)] = None,
    page: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    agent = find_agent(app, agent_id)
    since, until = _utc(from_date), _utc(to_date)
    if since is None and until is None:  # the store reads the page alone, however many runs wait
        limit, offset = (None, 0) if per_page is None else (per_page, page * per_page)
        found = await app.list_suspended_runs(
            thread_id=thread_id, resource_id=scoped(request, resource_id), agent_id=agent.id, limit=limit, offset=offset
        )
        runs, total = found.runs, found.total
    else:
        found = await app.list_suspended_runs(
            thread_id=thread_id, resource_id=scoped(request, resource_id), agent_id=agent.id
        )
        runs = [run for run in found.runs if _within(_utc(run.suspended_at), since, until)]
        total = len(runs)
        if per_page is not None:
            runs = runs[page * per_page : (page + 1) * per_page]
    shown = []
    for run in runs:
        calls = []
        for call in run.tool_calls:
            args, payload = await shown_call(
                agent, tool_call_id=call.tool_call_id, tool_name=call.tool_name, args=call.args,
                suspend_payload=call.suspend_payload, approval=call.requires_approval,
            )  # fmt: skip
            entry: dict[str, Any] = {
                "toolCallId": call.tool_call_id,
                "toolName": call.tool_name,
                "args": args,
                "requiresApproval": call.requires_approval,
            }
            if payload is not None:
                entry["suspendPayload"] = payload
            calls.append(entry)
        item: dict[str, Any] = {"runId": run.run_id, "status": "suspended"}
        if run.thread_id is not None:
            item["threadId"] = run.thread_id
        if run.resource_id is not None:
            item["resourceId"] = run.resource_id
        item["suspendedAt"] = iso(run.suspended_at)
        item["toolCalls"] = calls
        shown.append(item)
    return {"runs": shown, "total": total}


def _utc(moment: datetime | None) -> datetime | None:
    """A time with a zone (a time without one is taken as UTC), so that any two compare."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def _within(moment: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    if since is None and until is None:
        return True
    if moment is None:
        return False
    return (since is None or moment >= since) and (until is None or moment <= until)


@router.post(
    "/{agent_id}/observe",
    summary="Replay a run from an offset, then follow it to its next stop (SSE)",
    response_class=EventStream,
    responses=SSE_RESPONSES,
)
async def observe(app: AppDep, agent_id: str, body: ObserveBody) -> StreamingResponse:
    agent: Agent = find_agent(app, agent_id)
    if await run_owner(app, body.run_id) != agent.id:  # a run its thread still queues is followed too
        raise ApiError(404, f'run "{body.run_id}" does not belong to agent {agent.id}')
    return stream_response(app.attach(body.run_id, offset=body.offset), chunk_wire)
