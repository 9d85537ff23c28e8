"""Two tenants, acme and globex, each with a run waiting for a person, a memory thread and a paused schedule; and a
principal per role that holds it in acme only (the roles matrix and the cross-tenant tests)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import httpx

from tempo_agents.identity import Role

__all__ = [
    "ROLE_NAMES",
    "TENANT_ROLES",
    "TENANT_TOKENS",
    "TenantThings",
    "TenantWorld",
    "paused_schedule",
    "tenant_world",
]

ROLE_NAMES = {role.value: role for role in Role}
TENANT_TOKENS = {"tok-root": "root", **{f"tok-{role.value}": f"{role.value}-in-acme" for role in Role}}
"""token → principal: ``tok-viewer`` names ``viewer-in-acme`` …; ``tok-root`` is an admin everywhere."""
TENANT_ROLES = {
    "root": {"*": ["admin"]},
    **{f"{role.value}-in-acme": {"acme": [role.value]} for role in Role},
}
ROOT = {"Authorization": "Bearer tok-root"}


@dataclass(frozen=True)
class TenantThings:
    run_id: str
    thread_id: str
    schedule_id: str


@dataclass(frozen=True)
class TenantWorld:
    things: dict[str, TenantThings]


def paused_schedule(schedule_id: str, thread: str, resource: str) -> dict[str, object]:
    """The body of ``POST /schedules`` for an hourly, paused schedule of the assistant on ``resource``'s thread."""
    return {
        "agentId": "assistant",
        "message": "hello",
        "every": "1h",
        "paused": True,
        "scheduleId": schedule_id,
        "thread": thread,
        "resource": resource,
    }


async def _waiting_run(http: httpx.AsyncClient, tenant: str) -> TenantThings:
    thread = f"thread-{tenant}"
    schedule_id = f"nightly-{tenant}-{uuid.uuid4().hex[:8]}"  # schedules are the namespace's: one per test
    started = await http.post(
        "/agents/assistant/generate",
        json={"messages": "charge", "memory": {"thread": thread, "resource": tenant}},
        headers=ROOT,
    )
    assert started.status_code == 200, started.text
    schedule = await http.post(
        "/schedules", json=paused_schedule(schedule_id, f"scheduled-{tenant}", tenant), headers=ROOT
    )
    assert schedule.status_code == 201, schedule.text
    return TenantThings(run_id=started.json()["runId"], thread_id=thread, schedule_id=schedule_id)


async def tenant_world(http: httpx.AsyncClient) -> TenantWorld:
    """A run waiting for a person, its thread and a paused schedule in acme and in globex, made by root."""
    return TenantWorld(things={tenant: await _waiting_run(http, tenant) for tenant in ("acme", "globex")})
