"""The tenants a request may see, kept on the request by the guard for the routes that list."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import Request

from tempo_agents.client.app import App
from tempo_agents.identity import Principal
from tempo_agents.server.access.tenants import run_tenant
from tempo_agents.store.base import Resources

__all__ = ["Visibility", "scoped", "target_tenant", "tenant_check", "visible_runs", "visible_tenants"]


@dataclass(frozen=True)
class Visibility:
    """Who asks, and the tenants whose runs, schedules and inbox items they may see (``None``: every tenant)."""

    principal: Principal
    tenants: frozenset[str] | None
    target_tenant: str | None = None
    """The tenant of the run, schedule or thread the request names, when it names one."""

    def sees(self, tenant: str | None) -> bool:
        """Whether something in ``tenant`` (``None``: in no tenant) is visible."""
        if self.tenants is None:
            return True
        return tenant is not None and tenant in self.tenants


def _everything(tenant: str | None) -> bool:
    return True


def tenant_check(request: Request) -> Callable[[str | None], bool]:
    """Whether the request may see something of a tenant (everything, for a route the guard does not cover)."""
    seen = getattr(request.state, "visibility", None)
    return seen.sees if isinstance(seen, Visibility) else _everything


def visible_tenants(request: Request) -> frozenset[str] | None:
    """The tenants the request may see (``None``: every tenant; also for a route the guard does not cover)."""
    seen = getattr(request.state, "visibility", None)
    return seen.tenants if isinstance(seen, Visibility) else None


def scoped(request: Request, resource: str | None) -> Resources:
    """The resources a listing keeps: the one the caller asked for, narrowed to the tenants it may see."""
    tenants = visible_tenants(request)
    if tenants is None:
        return resource
    if resource is not None:
        return resource if resource in tenants else frozenset()
    return tenants


async def visible_runs(app: App, request: Request, run_ids: list[str]) -> list[str]:
    """The runs of ``run_ids`` in the tenants the request may see (all of them when it sees every tenant)."""
    tenants = visible_tenants(request)
    if tenants is None:
        return run_ids
    found = await asyncio.gather(*(run_tenant(app, run_id) for run_id in run_ids))
    return [run_id for run_id, run in zip(run_ids, found, strict=True) if run.tenant in tenants]


def target_tenant(request: Request) -> str | None:
    """The tenant of what the request acted on, as the guard found it (``None``: none, or no guard ran)."""
    seen = getattr(request.state, "visibility", None)
    return seen.target_tenant if isinstance(seen, Visibility) else None
