"""``POST /events/:source``: a delivery from a configured webhook source starts a run of its agent
(``ingress/webhook_sources.py``).

Like ``POST /agents/:agentId/events`` it needs no bearer token, the source's verification being the delivery's
credential: an unknown source is a 404, a forged delivery or a wrong token a 401, a malformed or too old/new one,
or one without an event id, a 400, a payload its template cannot render a 422. A verified delivery answers 202 with
the run id; the same event id again answers 200 with the same run id and starts nothing. The run's thread and
resource are the source's to say (``?thread=&resource=`` may only repeat them); on a thread, ``x-thread-outcome``
says whether the run started or was queued. No answer carries a secret or a token.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from tempo_agents.ingress import WebhookRefusedError
from tempo_agents.server.dependencies import PRINTABLE, AppDep
from tempo_agents.server.errors import ApiError
from tempo_agents.server.routes.events import event_answer

__all__ = ["router"]

router = APIRouter(prefix="/events", tags=["events"])


@router.post(
    "/{source}",
    summary="Start a run from a configured webhook source's delivery; one run per event id",
    status_code=202,
)
async def receive_source_event(
    app: AppDep,
    source: str,
    request: Request,
    thread: Annotated[
        str | None, Query(description="memory thread of the run: the source's, repeated", pattern=PRINTABLE)
    ] = None,
    resource: Annotated[
        str | None, Query(description="memory resource of the run: the source's, repeated", pattern=PRINTABLE)
    ] = None,
) -> JSONResponse:
    if source not in app.webhook_sources:
        raise ApiError(404, "No webhook source of that name is configured")
    if (thread is None) != (resource is None):
        raise ApiError(400, "thread and resource go together: pass both or neither")
    options: dict[str, Any] = {"memory": {"thread": thread, "resource": resource}} if thread is not None else {}
    body = await request.body()
    try:
        run = await app.receive_source_event(source, dict(request.headers), body, **options)
    except WebhookRefusedError as error:
        raise ApiError(error.status, error.message) from None
    return event_answer(run)
