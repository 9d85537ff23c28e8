"""The data routes of the dashboard: who is signed in, the inbox and its answers, the runs table, a run's
timeline, and the live feed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from starlette.responses import StreamingResponse

from tempo_agents.server.access.visibility import scoped, target_tenant, tenant_check
from tempo_agents.server.auth import principal, principal_groups
from tempo_agents.server.dashboard.answered import answered_page
from tempo_agents.server.dashboard.answering import answer_item
from tempo_agents.server.dashboard.asked import run_steps
from tempo_agents.server.dashboard.feed import DashboardFeed
from tempo_agents.server.dashboard.inbox import inbox_page
from tempo_agents.server.dashboard.runs_table import RunFigures
from tempo_agents.server.dashboard.timeline import run_timeline
from tempo_agents.server.dependencies import PRINTABLE, AppDep
from tempo_agents.server.resuming import describe_run
from tempo_agents.server.sse import HEARTBEAT_SECONDS, SSE_HEADERS, SSE_RESPONSES, EventStream, encode_event

__all__ = ["AnswerBody", "router"]

router = APIRouter(tags=["dashboard"])

FEED_DATA_LIMIT = 2000
"""How large (as JSON) an answer's data may be to travel with the feed's ``answered`` event to every dashboard."""


class AnswerBody(BaseModel):
    """``POST /inbox/answer``: the answer to one waiting call."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    run_id: str = Field(min_length=1, pattern=PRINTABLE)
    tool_call_id: str | None = Field(default=None, pattern=PRINTABLE)
    action: Literal["resume", "approve", "decline"] = "resume"
    resume_data: Any = None
    reason: str | None = None
    args: Any = None
    """An approval with the arguments the approver changed (``None``: as the model made them)."""


def _feed(request: Request) -> DashboardFeed:
    feed: DashboardFeed = request.app.state.dashboard_feed
    return feed


def _figures(request: Request) -> RunFigures:
    figures: RunFigures = request.app.state.dashboard_figures
    return figures


@router.get("/dashboard/session", summary="Who the dashboard acts as, and where the Temporal UI is")
async def session(app: AppDep, request: Request) -> dict[str, Any]:
    return {
        "principal": principal(request),
        "temporalUiUrl": request.app.state.temporal_ui_url,
        "namespace": app.client.namespace,
    }


@router.get(
    "/inbox",
    summary="Calls waiting for a person, a page of waiting runs at a time: those waiting for the caller first, "
    "then newest first",
)
async def inbox(
    app: AppDep,
    request: Request,
    agent: Annotated[str | None, Query(description="agent id", pattern=PRINTABLE)] = None,
    thread: Annotated[str | None, Query(description="memory thread id", pattern=PRINTABLE)] = None,
    resource: Annotated[str | None, Query(description="memory resource id", pattern=PRINTABLE)] = None,
    per_page: Annotated[int, Query(alias="perPage", ge=1, le=200)] = 25,
    cursor: Annotated[str | None, Query(description="nextCursor of the previous page")] = None,
) -> dict[str, Any]:
    return await inbox_page(
        app,
        agent=agent,
        thread=thread,
        resource=scoped(request, resource),
        per_page=per_page,
        cursor=cursor,
        principal=principal(request),
        groups=[*principal_groups(request), *app.groups.get(principal(request) or "", [])],
    )


@router.get("/inbox/answered", summary="Who answered which call, what and when: a page of answers, newest first")
async def answered(
    app: AppDep,
    request: Request,
    agent: Annotated[str | None, Query(description="agent id", pattern=PRINTABLE)] = None,
    per_page: Annotated[int, Query(alias="perPage", ge=1, le=100)] = 25,
    cursor: Annotated[str | None, Query(description="nextCursor of the previous page")] = None,
) -> dict[str, Any]:
    return await answered_page(app, agent=agent, per_page=per_page, cursor=cursor, resource=scoped(request, None))


@router.post(
    "/inbox/answer",
    summary="Answer a waiting call under the caller's name; a call answered already is a 409 naming who did",
)
async def answer(app: AppDep, body: AnswerBody, request: Request) -> dict[str, Any]:
    answered = await answer_item(
        app,
        run_id=body.run_id,
        tool_call_id=body.tool_call_id,
        action=body.action,
        data=body.resume_data,
        reason=body.reason,
        answered_by=principal(request),
        answered_by_groups=principal_groups(request),
        args=body.args,
    )
    data = body.resume_data if len(json.dumps(body.resume_data, default=str)) <= FEED_DATA_LIMIT else None
    what = {"action": body.action, "data": data, "reason": body.reason}  # a large answer: the card reads the run
    _feed(request).publish(
        {
            "type": "answered",
            "runId": body.run_id,
            "toolCallId": body.tool_call_id,
            "answeredBy": principal(request),
            "answeredAt": datetime.now(UTC).isoformat(),
            "answer": {key: value for key, value in what.items() if value is not None},
        },
        tenant=target_tenant(request),
    )
    return answered


@router.get("/dashboard/runs", summary="Runs, newest first, with their steps, tokens and waiting calls")
async def runs_table(
    request: Request,
    status: Annotated[str | None, Query(description="running, suspended, completed, failed, cancelled …")] = None,
    agent: Annotated[str | None, Query(description="agent id", pattern=PRINTABLE)] = None,
    thread: Annotated[str | None, Query(description="memory thread id", pattern=PRINTABLE)] = None,
    search: Annotated[
        str | None, Query(description="start of a run id, agent id or thread id", pattern=PRINTABLE, max_length=200)
    ] = None,
    per_page: Annotated[int, Query(alias="perPage", ge=1, le=200)] = 25,
    cursor: Annotated[str | None, Query(description="nextCursor of the previous page")] = None,
) -> dict[str, Any]:
    return await _figures(request).page(
        status=status,
        agent=agent,
        thread=thread,
        search=search,
        per_page=per_page,
        cursor=cursor,
        resource=scoped(request, None),
    )


@router.get("/runs/{run_id}/timeline", summary="A run's model steps and tool calls on a time axis, and its waits")
async def timeline(app: AppDep, run_id: str) -> dict[str, Any]:
    return await run_timeline(app, run_id)


@router.get(
    "/runs/{run_id}/steps",
    summary="What a run was asked, and per model step the messages new to the model and its tokens",
)
async def steps(app: AppDep, run_id: str) -> dict[str, Any]:
    await describe_run(app, run_id)  # a 404 for a run that does not exist
    return await run_steps(app.store, run_id)


async def _feed_events(
    feed: DashboardFeed, heartbeat: float, sees: Callable[[str | None], bool]
) -> AsyncIterator[bytes]:
    async with feed.subscribe(sees) as queue:
        yield encode_event({"type": "hello"})
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), heartbeat)
            except TimeoutError:
                yield b": ping\n\n"
                continue
            yield encode_event(event)


@router.get(
    "/dashboard/events",
    summary="The dashboard's live feed (SSE, never ends): answered calls, and changes of waiting or listed runs",
    response_class=EventStream,
    responses=SSE_RESPONSES,
)
async def events(request: Request) -> StreamingResponse:
    return EventStream(_feed_events(_feed(request), HEARTBEAT_SECONDS, tenant_check(request)), headers=SSE_HEADERS)
