"""Where the tenant of what a request names is found: a run's resource (its search attribute), a schedule's runs'
resource, the resource a start names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.client.app import App
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW

__all__ = ["Found", "memory_resource", "run_tenant", "schedule_tenant", "start_tenant"]


@dataclass(frozen=True)
class Found:
    """Whether the run or schedule exists, and its tenant (``None``: it has none)."""

    exists: bool
    tenant: str | None = None


async def run_tenant(app: App, run_id: str) -> Found:
    """The tenant of a run: its ``TempoAgentResource`` search attribute (a queued run's: its thread's resource)."""
    try:
        description = await app.client.get_workflow_handle(run_id).describe()
    except RPCError as error:
        if error.status not in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            raise
        return await _queued_tenant(app, run_id)
    if description.workflow_type != AGENT_RUN_WORKFLOW:
        return Found(exists=False)
    return Found(exists=True, tenant=description.typed_search_attributes.get(search_attributes.RESOURCE_ID))


async def _queued_tenant(app: App, run_id: str) -> Found:
    """A run its thread still queues has no workflow: its tenant is its thread's resource."""
    queued = await app.queued_run(run_id)
    return Found(exists=False) if queued is None else Found(exists=True, tenant=queued.place.resource_id)


async def schedule_tenant(app: App, schedule_id: str) -> Found:
    """The tenant of a schedule: the resource of the runs it starts."""
    try:
        view = await app.get_schedule(schedule_id).describe()
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise
        return Found(exists=False)
    if view.agent_id is None:
        return Found(exists=False)
    return Found(exists=True, tenant=memory_resource(view.options.get("memory")))


def memory_resource(memory: Any) -> str | None:
    """The resource of a run's ``memory`` option (``{"thread": ..., "resource": ...}``), when it names one."""
    if isinstance(memory, dict):
        resource = memory.get("resource")
        return resource if isinstance(resource, str) and resource else None
    return None


def start_tenant(body: Any, *, schedule: bool) -> str | None:
    """The tenant a start's body names: ``memory.resource`` (a schedule's: ``resource``)."""
    if not isinstance(body, dict):
        return None
    if schedule:
        resource = body.get("resource")
        return resource if isinstance(resource, str) and resource else None
    return memory_resource(body.get("memory"))
