"""The erasure route (ours, for administrators): everything of a resource, a thread or a run erased on request."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from tempo_agents.erasure import ErasureScope
from tempo_agents.identity import Role
from tempo_agents.server.access import request_principal, run_tenant
from tempo_agents.server.dependencies import AppDep
from tempo_agents.server.errors import ApiError

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
async def erase(app: AppDep, body: ErasureBody, request: Request) -> dict[str, Any]:
    """Schedules of the scope are deleted, what still runs is terminated, its rows leave the store and its
    executions leave Temporal; the answer names what was done, by id only. Erasing again is harmless. It needs the
    admin role in the tenant erased (a run's resource); a run whose tenant is unknown, the admin role everywhere."""
    ErasureScope(resource=body.resource_id, thread=body.thread_id, run=body.run_id)  # refused before any lookup
    tenant = body.resource_id
    if tenant is None and body.run_id is not None:
        tenant = (await run_tenant(app, body.run_id)).tenant
    if not request_principal(request).may(Role.ADMIN, tenant):
        where = f"tenant {tenant}" if tenant is not None else "every tenant"
        raise ApiError(403, f"erasing needs the admin role in {where}")
    report = await app.erase(resource=body.resource_id, thread=body.thread_id, run=body.run_id)
    return report.to_wire()
