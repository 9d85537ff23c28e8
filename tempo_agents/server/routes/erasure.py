"""The erasure route (ours, for administrators): everything of a resource, a thread or a run erased on request."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from tempo_agents.server.dependencies import AppDep

__all__ = ["ErasureBody", "router"]

router = APIRouter(prefix="/erasure", tags=["erasure"])


class ErasureBody(BaseModel):
    """What to erase: a ``resourceId``; a ``threadId`` with its ``resourceId``; or a ``runId`` alone."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    resource_id: str | None = Field(default=None, alias="resourceId", min_length=1, max_length=1000)
    thread_id: str | None = Field(default=None, alias="threadId", min_length=1, max_length=1000)
    run_id: str | None = Field(default=None, alias="runId", min_length=1, max_length=1000)


@router.post(
    "",
    summary="Erase everything of a resource, a thread or a run: schedules, running executions, store rows, histories",
)
async def erase(app: AppDep, body: ErasureBody) -> dict[str, Any]:
    """Schedules of the scope are deleted, what still runs is terminated, its rows leave the store and its
    executions leave Temporal; the answer names what was done, by id only. Erasing again is harmless."""
    report = await app.erase(resource=body.resource_id, thread=body.thread_id, run=body.run_id)
    return report.to_wire()
