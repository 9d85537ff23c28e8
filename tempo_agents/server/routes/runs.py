"""Operations routes (ours, not the reference's): find runs, inspect them, answer them, follow them.

``GET /runs/:runId/stream`` is the durable face of a run: SSE with ``id: <offset>`` lines, from
``?offset=N`` or from after the ``Last-Event-ID`` a reconnecting client sends, following the run
across every suspension and resume until its workflow closes.
"""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.responses import StreamingResponse
from temporalio.client import WorkflowExecutionStatus, WorkflowQueryFailedError

from tempo_agents.client.budget_usage import BudgetRefusedError
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import Message, normalize_messages
from tempo_agents.server.access.hidden import is_hidden
from tempo_agents.server.access.visibility import scoped, visible_runs
from tempo_agents.server.audit.intents import note_audit
from tempo_agents.server.auth import principal
from tempo_agents.server.bodies import (
    MAX_OFFSET,
    RunApproveBody,
    RunBudgetBody,
    RunDeclineBody,
    RunForkBody,
    RunResumeBody,
    RunSteerBody,
)
from tempo_agents.server.dependencies import PRINTABLE, AppDep
from tempo_agents.server.errors import ApiError
from tempo_agents.server.resuming import check_followable, describe_run, http_command, resume_run
from tempo_agents.server.run_start import check_model_settings
from tempo_agents.server.run_views import list_runs, run_detail
from tempo_agents.server.shapes import chunk_wire
from tempo_agents.server.sse import SSE_RESPONSES, EventStream, stream_response
from tempo_agents.streams import AgentStream

__all__ = ["router"]

router = APIRouter(prefix="/runs", tags=["runs"])


@router.get("", summary="Runs, newest first, from Temporal visibility")
async def runs(
    app: AppDep,
    request: Request,
    status: Annotated[str | None, Query(description="running, suspended, completed, failed, cancelled …")] = None,
    agent: Annotated[str | None, Query(description="agent id", pattern=PRINTABLE)] = None,
    thread: Annotated[str | None, Query(description="memory thread id", pattern=PRINTABLE)] = None,
    resource: Annotated[str | None, Query(description="memory resource id", pattern=PRINTABLE)] = None,
    per_page: Annotated[int, Query(alias="perPage", ge=1, le=1000)] = 20,
    cursor: Annotated[str | None, Query(description="nextCursor of the previous page")] = None,
) -> dict[str, Any]:
    return await list_runs(
        app,
        status=status,
        agent=agent,
        thread=thread,
        resource=scoped(request, resource),
        per_page=per_page,
        cursor=cursor,
    )


@router.get("/compare", summary="Two runs side by side: steps aligned, the first difference, tool calls diffed")
async def compare(
    app: AppDep,
    a: Annotated[str, Query(description="a run id", pattern=PRINTABLE, min_length=1)],
    b: Annotated[str, Query(description="another run id", pattern=PRINTABLE, min_length=1)],
) -> dict[str, Any]:
    for run_id in (a, b):
        if is_hidden(run_id):  # another tenant's
            raise ApiError(404, f'no run "{run_id}" exists')
    return await app.compare(a, b)


@router.get("/{run_id}/forks", summary="The runs forked from a run (visibility), newest first")
async def forks(app: AppDep, run_id: str, request: Request) -> dict[str, Any]:
    await describe_run(app, run_id)
    return {"runId": run_id, "forks": await visible_runs(app, request, await app.list_forks(run_id))}


def _fork_messages(raw: Any, field: str) -> list[Message] | None:
    """A fork body's messages (a string, or a list of strings or ``{role, content}``), or a 400 naming the field."""
    if raw is None:
        return None
    try:
        return normalize_messages(raw if isinstance(raw, (str, list)) else [raw])
    except (ValidationError, TypeError, ValueError):
        raise ApiError(400, "Invalid request body", issues=[{"field": field, "message": "Invalid input"}]) from None


@router.post("/{run_id}/fork", summary="Start a new run from a run's transcript at a step, with edits", status_code=201)
async def fork(app: AppDep, run_id: str, body: RunForkBody, request: Request) -> JSONResponse:
    await describe_run(app, run_id)
    check_model_settings(body.model_settings)
    messages = _fork_messages(body.messages, "messages")
    replace_input = _fork_messages(body.replace_input, "replaceInput")
    options: dict[str, Any] = {}
    if body.instructions is not None:
        options["extra_instructions"] = body.instructions
    for name in ("max_steps", "model_settings", "request_context", "memory"):
        value = getattr(body, name)
        if value is not None:
            options[name] = value
    try:
        started = await app.fork(
            run_id,
            at_step=body.at_step,
            messages=messages,
            replace_input=replace_input,
            agent_id=body.agent_id,
            reuse=body.reuse,
            rerun=body.rerun,
            **options,
        )
    except ValidationError as error:
        issues = [{"field": ".".join(str(p) for p in e["loc"]) or "root", "message": e["msg"]} for e in error.errors()]
        raise ApiError(400, "Invalid request body", issues=issues) from None
    await note_audit(request, target=started.run_id)  # the new run; the intent keeps the source run
    origin = await app.fork_origin(started.run_id)
    return JSONResponse({"runId": started.run_id, "forkOf": origin}, status_code=201)


@router.post("/{run_id}/retry", summary="Run a failed run again from its last good step (a fork)", status_code=201)
async def retry(app: AppDep, run_id: str, request: Request) -> JSONResponse:
    await describe_run(app, run_id)
    started = await app.retry(run_id)
    await note_audit(request, target=started.run_id)  # the new run; the intent keeps the failed one
    origin = await app.fork_origin(started.run_id)
    return JSONResponse({"runId": started.run_id, "forkOf": origin}, status_code=201)


@router.get("/{run_id}", summary="A run: status, mode, step, usage, pending calls, tasks, times")
async def run(app: AppDep, run_id: str) -> dict[str, Any]:
    return await run_detail(app, run_id)


@router.get("/{run_id}/tasks", summary="A run's task list")
async def tasks(app: AppDep, run_id: str) -> list[dict[str, Any]]:
    await describe_run(app, run_id)
    items = await app.queries(run_id).tasks()
    return [item.to_wire() for item in items]


@router.get(
    "/{run_id}/stream",
    summary="Follow a whole run from an offset (SSE with id lines)",
    response_class=EventStream,
    responses=SSE_RESPONSES,
)
async def run_stream(
    app: AppDep,
    run_id: str,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="first journal offset to send")] = 0,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    if last_event_id is not None:
        offset = max(offset, _after_event(last_event_id))
    await check_followable(app, run_id)
    return stream_response(app.attach(run_id, offset=offset, follow="run"), chunk_wire, with_ids=True)


_EVENT_ID = re.compile(r"[0-9]{1,19}")


def _after_event(last_event_id: str) -> int:
    """The offset after the event a reconnecting client saw last: its ``id`` line was a journal offset."""
    text = last_event_id.strip()
    if not text:
        return 0
    if not _EVENT_ID.fullmatch(text) or int(text) >= MAX_OFFSET:
        raise ApiError(
            400,
            "Invalid request headers",
            issues=[{"field": "Last-Event-ID", "message": "expected the id of an event of this stream (an offset)"}],
        )
    return int(text) + 1


def _accepted(resumed: AgentStream, tool_call_id: str | None) -> dict[str, Any]:
    return {"runId": resumed.run_id, "accepted": True, "toolCallId": tool_call_id, "offset": resumed.offset}


@router.post("/{run_id}/resume", summary="Resume a suspended call; the continuation starts at offset")
async def resume(app: AppDep, run_id: str, body: RunResumeBody, request: Request) -> dict[str, Any]:
    command = http_command(request, "resume", run_id, body.tool_call_id, data=body.resume_data)
    _, resumed = await resume_run(app, None, command)
    return _accepted(resumed, body.tool_call_id)


@router.post("/{run_id}/approve", summary="Approve a call waiting for approval")
async def approve(app: AppDep, run_id: str, body: RunApproveBody, request: Request) -> dict[str, Any]:
    command = http_command(request, "approve", run_id, body.tool_call_id, args=body.args)
    _, resumed = await resume_run(app, None, command)
    return _accepted(resumed, body.tool_call_id)


@router.post("/{run_id}/decline", summary="Decline a call waiting for approval")
async def decline(app: AppDep, run_id: str, body: RunDeclineBody, request: Request) -> dict[str, Any]:
    command = http_command(request, "decline", run_id, body.tool_call_id, reason=body.reason)
    _, resumed = await resume_run(app, None, command)
    return _accepted(resumed, body.tool_call_id)


@router.get("/{run_id}/budget", summary="A run's usage and remaining budget (run, thread, resource; day, month)")
async def budget_usage(app: AppDep, run_id: str) -> dict[str, Any]:
    await describe_run(app, run_id)
    try:
        usage = await asyncio.wait_for(app.budget_usage(run_id), timeout=10)
    except (WorkflowQueryFailedError, TimeoutError) as error:  # a worker from before budgets, or none at all
        message = "no worker answered within 10 s" if isinstance(error, TimeoutError) else error.message
        raise ApiError(503, f"the run's budget cannot be read: {message}") from None
    return usage.to_wire()


@router.post("/{run_id}/budget", summary="Raise the budget of a run that waits for it, or end the run")
async def answer_budget(app: AppDep, run_id: str, body: RunBudgetBody, request: Request) -> dict[str, Any]:
    await describe_run(app, run_id)
    if (body.action == "raise") != (body.budget is not None):
        issue = "raise needs budget" if body.action == "raise" else "end takes no budget"
        raise ApiError(400, "Invalid request body", issues=[{"field": "budget", "message": issue}])
    try:
        resumed = await app.answer_budget(
            run_id, budget=body.budget, end=body.action == "end", answered_by=principal(request)
        )
    except ValidationError as error:
        issues = [
            {"field": ".".join(["budget", *(str(p) for p in e["loc"])]), "message": e["msg"]} for e in error.errors()
        ]
        raise ApiError(400, "Invalid request body", issues=issues) from None
    except (BudgetRefusedError, ConfigurationError) as error:
        raise ApiError(409, str(error)) from None
    return {"runId": run_id, "accepted": True, "action": body.action, "offset": resumed.offset}


@router.post("/{run_id}/steer", summary="Deliver a user message into the running run's next model step")
async def steer(app: AppDep, run_id: str, body: RunSteerBody, request: Request) -> dict[str, Any]:
    try:
        messages = normalize_messages(body.message)
    except (ValidationError, TypeError, ValueError) as error:
        raise ApiError(400, "message must be a string or one {role, content} message") from error
    if len(messages) != 1 or messages[0].role != "user" or not messages[0].text:
        raise ApiError(400, "message must be one user message with text")
    await describe_run(app, run_id)
    accepted = await app.steer(run_id, messages[0], sent_by=principal(request))
    return {"runId": run_id, **accepted.to_wire()}


@router.post(
    "/{run_id}/interrupt", summary="Stop the run at its next step boundary, keeping what it did", status_code=202
)
async def interrupt(app: AppDep, run_id: str, request: Request) -> JSONResponse:
    await describe_run(app, run_id)
    await app.interrupt(run_id, requested_by=principal(request))
    return JSONResponse({"runId": run_id, "interruptRequested": True}, status_code=202)


@router.post("/{run_id}/rollback", summary="Cancel the run and remove its messages from its memory thread")
async def rollback(app: AppDep, run_id: str) -> dict[str, Any]:
    await describe_run(app, run_id)
    done = await app.rollback(run_id)
    return {
        "runId": run_id,
        "status": done.status,
        "threadId": done.thread_id,
        "resourceId": done.resource_id,
        "removedMessages": done.removed_messages,
    }


@router.post("/{run_id}/cancel", summary="Cancel a running run", status_code=202)
async def cancel(app: AppDep, run_id: str) -> JSONResponse:
    description = await describe_run(app, run_id)
    if description.status != WorkflowExecutionStatus.RUNNING:
        raise ApiError(409, f'run "{run_id}" is not running')
    await app.cancel_run(run_id)
    # Temporal takes a cancel for a run that closed since it was described, and does nothing with it: ask again.
    after = await describe_run(app, run_id)
    if after.status not in (WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.CANCELED):
        raise ApiError(409, f'run "{run_id}" is not running')
    return JSONResponse({"runId": run_id, "cancelRequested": True}, status_code=202)
