"""Thread routes (ours): a memory thread's runs (active, queued, done) and messages, and its queue's entries
cancelled before they run (``threads/operations.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from tempo_agents.server.dependencies import PRINTABLE, AppDep
from tempo_agents.server.errors import ApiError

__all__ = ["router"]

router = APIRouter(prefix="/threads", tags=["threads"])

ResourceQuery = Annotated[str, Query(alias="resourceId", description="the thread's resource id", pattern=PRINTABLE)]


# ``:path``: a thread id may hold "/" (sent percent-escaped, as "%2F", which the server decodes before routing).
@router.delete(
    "/{thread_id:path}/queue/{run_id}", summary="Take a queued run out of its thread's queue before it starts"
)
async def cancel_queued(app: AppDep, thread_id: str, run_id: str, resource_id: ResourceQuery) -> dict[str, Any]:
    if not await app.cancel_queued_run(thread_id, run_id, resource_id=resource_id):
        raise ApiError(404, f'run "{run_id}" is not queued on thread "{thread_id}"')
    return {"runId": run_id, "removed": True}


@router.get("/{thread_id:path}", summary="A memory thread: its runs (active, queued, done) and its messages in order")
async def thread(app: AppDep, thread_id: str, resource_id: ResourceQuery) -> dict[str, Any]:
    return (await app.thread(thread_id, resource_id=resource_id)).to_wire()
