"""The guard every route passes through: the route's rule, the principal, the tenant of what it names, the role
it needs there, then the policy hook; what the principal may see is left on the request for listings."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request

from tempo_agents.client.app import App
from tempo_agents.identity import Principal, Role
from tempo_agents.server.access.hidden import hide
from tempo_agents.server.access.policy import AccessTarget, Decision, Filter, Policy, Verdict
from tempo_agents.server.access.principals import request_principal
from tempo_agents.server.access.route_rules import ROUTE_RULES, RouteRule, TargetKind
from tempo_agents.server.access.tenants import memory_resource, run_tenant, schedule_tenant, start_tenant
from tempo_agents.server.access.visibility import Visibility
from tempo_agents.server.errors import ApiError

__all__ = ["access_dependency", "route_rule"]

_CONVERTER = re.compile(r"\{(\w+):\w+\}")
"""A path parameter's converter (``{thread_id:path}``), which the OpenAPI document and the rules leave out."""

RequestHook = Callable[[Request], Awaitable[None] | None]


def route_rule(request: Request) -> RouteRule:
    """The rule of the route the request matched; a route without one is refused."""
    route = request.scope.get("route")
    template = getattr(route, "path", "")
    base: str = getattr(request.app.state, "api_prefix", "")
    key = _CONVERTER.sub(r"{\1}", template[len(base) :] if base and template.startswith(base + "/") else template)
    rule = ROUTE_RULES.get((request.method, key))
    if rule is None:
        raise ApiError(403, f"{request.method} {template} has no access rule: refused")
    return rule


def _refused(principal: Principal, rule: RouteRule, tenant: str | None) -> ApiError:
    where = f" in tenant {tenant}" if tenant is not None else ""
    assert rule.role is not None
    return ApiError(403, f"{principal.name} may not {rule.action}{where}: it needs the {rule.role.value} role")


async def _body(request: Request) -> Any:
    try:
        return json.loads(await request.body() or b"null")
    except ValueError:
        return None


class _Check:
    """One request's check: what the route names, resolved to its tenant and held against the principal."""

    def __init__(self, request: Request, rule: RouteRule, principal: Principal, *, policy: bool) -> None:
        self.request = request
        self.rule = rule
        self.principal = principal
        self.looks_up = policy or principal.tenants_for(Role.VIEWER) is not None
        """Whether a run's tenant is looked up: not for a principal who sees every tenant, unless a policy asks."""
        self.hidden: list[str] = []
        """The runs and schedules the request names that the principal may not see."""
        self.tenant: str | None = None
        """The tenant of the run or schedule the request names, or the one a start names, as soon as it is found
        (before any refusal)."""
        self.app: App = request.app.state.tempo_app
        self.agent_id: str | None = request.path_params.get("agent_id")

    @property
    def role(self) -> Role:
        assert self.rule.role is not None
        return self.rule.role

    def _needs_anywhere(self) -> None:
        tenants = self.principal.tenants_for(self.role)
        if tenants is not None and not tenants:
            raise _refused(self.principal, self.rule, None)

    def _needs_in(self, tenant: str | None) -> None:
        if not self.principal.may(self.role, tenant):
            raise _refused(self.principal, self.rule, tenant)

    async def _run(self, run_id: str) -> AccessTarget:
        found = await run_tenant(self.app, run_id)
        self.tenant = found.tenant
        target = AccessTarget(kind=self.rule.target.value, id=run_id, tenant=found.tenant, agent_id=self.agent_id)
        if not found.exists:
            return target  # the route answers its own 404
        if not self.principal.may(Role.VIEWER, found.tenant):
            self.hidden.append(run_id)
            return target
        self._needs_in(found.tenant)
        return target

    async def _schedule(self, schedule_id: str, body: Any) -> AccessTarget:
        found = await schedule_tenant(self.app, schedule_id)
        self.tenant = found.tenant
        target = AccessTarget(kind=self.rule.target.value, id=schedule_id, tenant=found.tenant)
        if not found.exists:
            return target
        if not self.principal.may(Role.VIEWER, found.tenant):
            self.hidden.append(schedule_id)
            return target
        self._needs_in(found.tenant)
        moved = start_tenant(body, schedule=True)
        if moved is not None:  # a change that moves the schedule's runs into another tenant
            self._needs_in(moved)
        return target

    async def _compare(self) -> AccessTarget:
        ids = [self.request.query_params.get(name) for name in ("a", "b")]
        tenant: str | None = None
        for run_id in ids:
            if run_id:
                tenant = (await self._run(run_id)).tenant
        return AccessTarget(kind=self.rule.target.value, id=ids[0], tenant=tenant)

    def _agent_known(self) -> bool:
        return self.agent_id is None or any(agent.id == self.agent_id for agent in self.app.agents)

    async def target(self) -> AccessTarget:
        """What the request acts on, its tenant checked: a 404 for what the principal may not see, a 403 for what
        it may see but not do."""
        kind = self.rule.target
        if kind in (TargetKind.APP, TargetKind.LIST):
            self._needs_anywhere()
            return AccessTarget(kind=kind.value, agent_id=self.agent_id)
        if kind is TargetKind.THREAD:
            tenant = self.request.query_params.get("resourceId")
            self._needs_in(tenant)
            return AccessTarget(kind=kind.value, id=self.request.path_params.get("thread_id"), tenant=tenant)
        if kind is TargetKind.COMPARE:
            return await self._compare()
        body = await _body(self.request)
        if kind is TargetKind.START:
            tenant = self.tenant = start_tenant(body, schedule=self.agent_id is None)
            self._needs_in(tenant)
            return AccessTarget(kind=kind.value, tenant=tenant, agent_id=self.agent_id)
        if kind is TargetKind.SCHEDULE:
            return await self._schedule(self.request.path_params["schedule_id"], body)
        run_id = self.request.path_params.get("run_id")
        if kind is TargetKind.BODY_RUN:
            run_id = body.get("runId", body.get("run_id")) if isinstance(body, dict) else None
        if not isinstance(run_id, str) or not run_id or not self._agent_known():
            return AccessTarget(kind=kind.value, agent_id=self.agent_id)  # the route refuses it itself
        if kind is TargetKind.RUN and not self.looks_up and self.principal.tenants_for(self.role) is None:
            return AccessTarget(kind=kind.value, id=run_id, agent_id=self.agent_id)  # may do this in every tenant
        target = await self._run(run_id)
        if self.rule.action == "runs.fork":
            into = memory_resource(body.get("memory")) if isinstance(body, dict) else None
            if into is not None:
                self._needs_in(into)
        return target


def _narrowed(visible: frozenset[str] | None, verdict: Verdict) -> frozenset[str] | None:
    if not isinstance(verdict, Filter):
        return visible
    return verdict.tenants if visible is None else visible & verdict.tenants


async def _decide(policy: Policy | None, principal: Principal, rule: RouteRule, target: AccessTarget) -> Verdict:
    if policy is None:
        return Decision.ALLOW
    verdict = policy(principal, rule.action, target)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    if verdict is Decision.DENY:
        raise ApiError(403, f"{principal.name} may not {rule.action}: refused by the server's policy")
    return verdict


def _hide_filtered(check: _Check, target: AccessTarget, verdict: Verdict) -> None:
    """A policy's filter applies to one run or schedule too: outside it, it is answered as one that does not exist."""
    if not isinstance(verdict, Filter) or target.id is None:
        return
    if target.tenant is not None and target.tenant in verdict.tenants:
        return
    if check.rule.target in (TargetKind.SCHEDULE, TargetKind.RUN, TargetKind.BODY_RUN, TargetKind.COMPARE):
        check.hidden.append(target.id)
        return
    raise ApiError(403, f"{check.principal.name} may not {check.rule.action}: refused by the server's policy")


def access_dependency(hook: RequestHook | None, policy: Policy | None) -> Callable[[Request], Awaitable[None]]:
    """The FastAPI dependency every guarded route runs first: ``hook`` (a request hook, ``authorize(request)``,
    which may set the principal or raise), then the route's role in the tenant of what it names, then ``policy``."""

    async def guard(request: Request) -> None:
        if hook is not None:
            outcome = hook(request)
            if inspect.isawaitable(outcome):
                await outcome
        hide(())
        rule = route_rule(request)
        if rule.role is None:
            return
        principal = request_principal(request)
        check = _Check(request, rule, principal, policy=policy is not None)
        try:
            target = await check.target()
            verdict = await _decide(policy, principal, rule, target)
            _hide_filtered(check, target, verdict)
        except ApiError:  # the refusal's audit record names the tenant the check found
            request.state.visibility = Visibility(principal, frozenset(), check.tenant)
            raise
        hide(check.hidden)
        tenants = _narrowed(principal.tenants_for(Role.VIEWER), verdict)
        request.state.visibility = Visibility(principal, tenants, target.tenant)

    return guard
