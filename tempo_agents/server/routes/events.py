"""``POST /agents/:agentId/events``: a webhook from another system starts a run (see ``ingress/events.py``).

The delivery's Standard Webhooks signature is its credential, so the route needs no bearer token: a forged
delivery is a 401, a malformed or too old one a 400, an agent without a secret a 404. A verified delivery answers
202 with the run id; the same ``webhook-id`` again answers 200 with the same run id and starts nothing. A payload
the template cannot render is a 422 (sending it again would fail the same way). The run's thread and resource are
the signed body's (``"memory"``): ``?thread=&resource=`` may only repeat them. A delivery signed only with an
App-wide ``"*"`` secret names its agent in its signed body (``"agentId"``), which must be the path's. On a thread,
the answer's ``x-thread-outcome`` says whether the run started or was queued behind the thread's active run.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from tempo_agents.ingress import EventRun, WebhookRefusedError, event_secrets_of
from tempo_agents.server.dependencies import PRINTABLE, AppDep, find_agent
from tempo_agents.server.errors import ApiError
from tempo_agents.server.run_start import outcome_headers

__all__ = ["event_answer", "router"]

router = APIRouter(prefix="/agents", tags=["events"])


@router.post(
    "/{agent_id}/events",
    summary="Start a run from a signed webhook (Standard Webhooks); one run per webhook-id",
    status_code=202,
)
async def receive_event(
    app: AppDep,
    agent_id: str,
    request: Request,
    template: Annotated[str | None, Query(description="name of an event template registered on the App")] = None,
    thread: Annotated[
        str | None, Query(description="memory thread of the run: the signed body's, repeated", pattern=PRINTABLE)
    ] = None,
    resource: Annotated[
        str | None, Query(description="memory resource of the run: the signed body's, repeated", pattern=PRINTABLE)
    ] = None,
) -> JSONResponse:
    agent = find_agent(app, agent_id)
    if not event_secrets_of(app, agent.id):
        raise ApiError(404, f"Agent with id {agent_id} takes no events")
    if (thread is None) != (resource is None):
        raise ApiError(400, "thread and resource go together: pass both or neither")
    options: dict[str, Any] = {"memory": {"thread": thread, "resource": resource}} if thread is not None else {}
    body = await request.body()
    try:
        run = await app.receive_event(agent.id, dict(request.headers), body, template=template, **options)
    except WebhookRefusedError as error:
        raise ApiError(error.status, error.message) from None
    return event_answer(run)


def event_answer(run: EventRun) -> JSONResponse:
    """A verified delivery's answer: 202 for a run started (or queued on its thread), 200 for a duplicate, with the
    thread's outcome in headers (``x-thread-outcome`` ...) when the run is on a thread."""
    return JSONResponse(
        {"runId": run.run_id, "duplicate": run.duplicate},
        status_code=200 if run.duplicate else 202,
        headers=outcome_headers(run.thread_outcome),
    )
