"""Which routes change something, and what each one records: its action, its target and the tenant it touches.

:data:`ROUTE_ACTIONS` maps a route's endpoint (the function FastAPI calls, named by its module under
``tempo_agents.server`` and its name, so the routes need not be imported here and may import the audit helpers) to
its :class:`RouteAction`; a route not in it changes nothing and records nothing (``tests/audit`` checks that every
name is a route's). Targets and tenants are read from the path, the JSON body and the query:
a run's tenant is its ``resource`` (the run's search attribute, read by the intent).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request

from tempo_agents.server.access.tenants import memory_resource

__all__ = ["ROUTE_ACTIONS", "RouteAction", "Seen", "action_of"]


@dataclass(frozen=True)
class Seen:
    """What a request says about its action: its path parameters, its JSON body (``{}`` when it has none) and its
    query."""

    path: Mapping[str, Any]
    body: Mapping[str, Any]
    query: Mapping[str, str]

    @classmethod
    def of(cls, request: Request, body: Any) -> Seen:
        return cls(request.path_params, body if isinstance(body, dict) else {}, request.query_params)

    def text(self, where: str, name: str) -> str | None:
        value = {"path": self.path, "body": self.body, "query": self.query}[where].get(name)
        return value if isinstance(value, str) and value else None


Pick = Callable[[Seen], "str | None"]


@dataclass(frozen=True)
class RouteAction:
    """A route's action (``action`` names it, or ``named`` picks it from the request), its ``target``, the run whose
    ``resource`` is its tenant (``run``) or the tenant itself (``tenant``); ``guarded_tenant``: the tenant the access
    guard found for what the route names (a schedule's runs' resource)."""

    action: str
    target: Pick
    run: Pick | None = None
    tenant: Pick | None = None
    named: Pick | None = None
    guarded_tenant: bool = False

    def name(self, seen: Seen) -> str:
        return (self.named(seen) if self.named is not None else None) or self.action


def _path(name: str) -> Pick:
    return lambda seen: seen.text("path", name)


def _body(name: str) -> Pick:
    return lambda seen: seen.text("body", name)


def _query(name: str) -> Pick:
    return lambda seen: seen.text("query", name)


def _start_target(seen: Seen) -> str | None:
    return seen.text("body", "runId") or seen.text("path", "agent_id")


def _start_tenant(seen: Seen) -> str | None:
    return memory_resource(seen.body.get("memory")) or seen.text("body", "resourceId")


def _tool_call(run_from: str) -> Pick:
    def pick(seen: Seen) -> str | None:
        run = seen.text(run_from, "run_id" if run_from == "path" else "runId")
        call = seen.text("body", "toolCallId")
        return None if run is None else run if call is None else f"{run}/{call}"

    return pick


def _budget_action(seen: Seen) -> str | None:
    chosen = seen.text("body", "action")
    return f"budget.{chosen}" if chosen in ("raise", "end") else None


def _schedule_target(seen: Seen) -> str | None:
    return seen.text("path", "schedule_id") or seen.text("body", "scheduleId") or seen.text("body", "agentId")


def _erased(seen: Seen) -> str | None:
    """What an erasure names, by id only (its run, else its thread, else its resource)."""
    return seen.text("body", "runId") or seen.text("body", "threadId") or seen.text("body", "resourceId")


_START = RouteAction("start", _start_target, tenant=_start_tenant)
_AGENT_ANSWER = RouteAction("answer", _tool_call("body"), run=_body("runId"))
_RUN_ANSWER = RouteAction("answer", _tool_call("path"), run=_path("run_id"))


def _run(action: str) -> RouteAction:
    return RouteAction(action, _path("run_id"), run=_path("run_id"))


def _schedule(action: str) -> RouteAction:
    """A change to an existing schedule: its tenant is the schedule's (as the guard found it), even for a change
    that moves its runs into another resource."""
    return RouteAction(action, _schedule_target, guarded_tenant=True)


ROUTE_ACTIONS: Mapping[str, RouteAction] = {
    "routes.agents.stream": _START,
    "routes.agents.generate": _START,
    "routes.agents.resume_stream": _AGENT_ANSWER,
    "routes.agents.approve": _AGENT_ANSWER,
    "routes.agents.decline": _AGENT_ANSWER,
    "routes.agents.approve_generate": _AGENT_ANSWER,
    "routes.agents.decline_generate": _AGENT_ANSWER,
    "routes.runs.resume": _RUN_ANSWER,
    "routes.runs.approve": _RUN_ANSWER,
    "routes.runs.decline": _RUN_ANSWER,
    "routes.runs.answer_budget": RouteAction("budget", _path("run_id"), run=_path("run_id"), named=_budget_action),
    "routes.runs.steer": _run("steer"),
    "routes.runs.interrupt": _run("interrupt"),
    "routes.runs.rollback": _run("rollback"),
    "routes.runs.cancel": _run("cancel"),
    "routes.runs.fork": _run("fork"),
    "routes.runs.retry": _run("retry"),
    "dashboard.routes.answer": RouteAction("answer", _tool_call("body"), run=_body("runId")),
    "routes.answer_links.answer": RouteAction("answer-link", lambda seen: None),
    "routes.schedules.create": RouteAction("schedule.create", _schedule_target, tenant=_body("resource")),
    "routes.schedules.update": _schedule("schedule.update"),
    "routes.schedules.pause": _schedule("schedule.pause"),
    "routes.schedules.unpause": _schedule("schedule.unpause"),
    "routes.schedules.trigger": _schedule("schedule.trigger"),
    "routes.schedules.backfill": _schedule("schedule.backfill"),
    "routes.schedules.delete": _schedule("schedule.delete"),
    "routes.events.receive_event": RouteAction("event.ingest", _path("agent_id"), tenant=_query("resource")),
    "routes.event_sources.receive_source_event": RouteAction("event.ingest", _path("source")),
    "routes.threads.cancel_queued": RouteAction("thread.dequeue", _path("run_id"), tenant=_query("resourceId")),
    "routes.tools.execute_tool": RouteAction("tool.execute", _path("tool_id")),
    "routes.tools.execute_agent_tool": RouteAction("tool.execute", _path("tool_id")),
    "routes.slack_interactions.interactions": RouteAction("answer-slack", lambda seen: None),
    "routes.erasure.erase": RouteAction("erase", _erased, tenant=_body("resourceId"), run=_body("runId")),
}
"""Every route that changes something, by endpoint."""


def action_of(endpoint: Callable[..., Any] | None) -> RouteAction | None:
    """The action of the route whose endpoint is ``endpoint``, or ``None``."""
    if endpoint is None:
        return None
    module = endpoint.__module__.removeprefix("tempo_agents.server.")
    return ROUTE_ACTIONS.get(f"{module}.{endpoint.__name__}")
