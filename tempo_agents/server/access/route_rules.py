"""Every route of the HTTP API, as the action it is, the role it needs and what it acts on.

The table is keyed by method and the route's path under the API prefix, as the OpenAPI document names it. A route
missing from it is refused (403) by the guard, and a test compares the table with the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tempo_agents.identity import Role

__all__ = ["ROUTE_RULES", "RouteRule", "TargetKind"]


class TargetKind(StrEnum):
    """What a route acts on, which says where its tenant comes from."""

    OPEN = "open"
    """Served to everyone, without a principal (health and readiness probes)."""
    SIGNED = "signed"
    """Carries its own credential (a webhook's signature): no principal, no role."""
    APP = "app"
    """The App's configuration (agents, tools): no tenant; the role is needed in some tenant."""
    LIST = "list"
    """A listing: filtered to the tenants in which the principal holds the role."""
    RUN = "run"
    """One run, named in the path (``run_id``): its tenant is the run's resource."""
    BODY_RUN = "body-run"
    """One run, named in the body (``runId``)."""
    COMPARE = "compare"
    """Two runs, named in the query (``a`` and ``b``)."""
    START = "start"
    """A new run, into the tenant the body names (``memory.resource``, or ``resource`` for a schedule)."""
    SCHEDULE = "schedule"
    """One schedule, named in the path: its tenant is its runs' resource."""
    THREAD = "thread"
    """A memory thread: its tenant is the ``resourceId`` of the query."""


@dataclass(frozen=True)
class RouteRule:
    """What one route is: the action a policy sees, the role it needs and what it acts on."""

    action: str
    role: Role | None
    target: TargetKind


def _rule(action: str, role: Role | None, target: TargetKind) -> RouteRule:
    return RouteRule(action=action, role=role, target=target)


_V, _A, _O, _ADMIN = Role.VIEWER, Role.APPROVER, Role.OPERATOR, Role.ADMIN
_K = TargetKind

ROUTE_RULES: dict[tuple[str, str], RouteRule] = {
    ("GET", "/health"): _rule("health", None, _K.OPEN),
    ("GET", "/ready"): _rule("ready", None, _K.OPEN),
    ("GET", "/agents"): _rule("agents.list", _V, _K.APP),
    ("GET", "/agents/{agent_id}"): _rule("agents.read", _V, _K.APP),
    ("POST", "/agents/{agent_id}/stream"): _rule("runs.start", _O, _K.START),
    ("POST", "/agents/{agent_id}/generate"): _rule("runs.start", _O, _K.START),
    ("POST", "/agents/{agent_id}/resume-stream"): _rule("runs.answer", _A, _K.BODY_RUN),
    ("POST", "/agents/{agent_id}/approve-tool-call"): _rule("runs.answer", _A, _K.BODY_RUN),
    ("POST", "/agents/{agent_id}/decline-tool-call"): _rule("runs.answer", _A, _K.BODY_RUN),
    ("POST", "/agents/{agent_id}/approve-tool-call-generate"): _rule("runs.answer", _A, _K.BODY_RUN),
    ("POST", "/agents/{agent_id}/decline-tool-call-generate"): _rule("runs.answer", _A, _K.BODY_RUN),
    ("GET", "/agents/{agent_id}/suspended-runs"): _rule("runs.list", _V, _K.LIST),
    ("POST", "/agents/{agent_id}/observe"): _rule("runs.read", _V, _K.BODY_RUN),
    ("GET", "/tools"): _rule("tools.list", _V, _K.APP),
    ("GET", "/tools/{tool_id}"): _rule("tools.read", _V, _K.APP),
    ("POST", "/tools/{tool_id}/execute"): _rule("tools.execute", _ADMIN, _K.APP),
    ("GET", "/agents/{agent_id}/tools/{tool_id}"): _rule("tools.read", _V, _K.APP),
    ("POST", "/agents/{agent_id}/tools/{tool_id}/execute"): _rule("tools.execute", _ADMIN, _K.APP),
    ("GET", "/runs"): _rule("runs.list", _V, _K.LIST),
    ("GET", "/runs/compare"): _rule("runs.compare", _V, _K.COMPARE),
    ("GET", "/runs/{run_id}/forks"): _rule("runs.forks", _V, _K.RUN),
    ("POST", "/runs/{run_id}/fork"): _rule("runs.fork", _O, _K.RUN),
    ("POST", "/runs/{run_id}/retry"): _rule("runs.retry", _O, _K.RUN),
    ("GET", "/runs/{run_id}"): _rule("runs.read", _V, _K.RUN),
    ("GET", "/runs/{run_id}/tasks"): _rule("runs.read", _V, _K.RUN),
    ("GET", "/runs/{run_id}/stream"): _rule("runs.read", _V, _K.RUN),
    ("POST", "/runs/{run_id}/resume"): _rule("runs.answer", _A, _K.RUN),
    ("POST", "/runs/{run_id}/approve"): _rule("runs.answer", _A, _K.RUN),
    ("POST", "/runs/{run_id}/decline"): _rule("runs.answer", _A, _K.RUN),
    ("GET", "/runs/{run_id}/budget"): _rule("runs.read", _V, _K.RUN),
    ("POST", "/runs/{run_id}/budget"): _rule("runs.budget", _O, _K.RUN),
    ("POST", "/runs/{run_id}/steer"): _rule("runs.steer", _O, _K.RUN),
    ("POST", "/runs/{run_id}/interrupt"): _rule("runs.interrupt", _O, _K.RUN),
    ("POST", "/runs/{run_id}/rollback"): _rule("runs.rollback", _O, _K.RUN),
    ("POST", "/runs/{run_id}/cancel"): _rule("runs.cancel", _O, _K.RUN),
    ("GET", "/runs/{run_id}/timeline"): _rule("runs.read", _V, _K.RUN),
    ("GET", "/runs/{run_id}/steps"): _rule("runs.read", _V, _K.RUN),
    ("DELETE", "/threads/{thread_id}/queue/{run_id}"): _rule("threads.dequeue", _O, _K.THREAD),
    ("GET", "/threads/{thread_id}"): _rule("threads.read", _V, _K.THREAD),
    ("GET", "/schedules"): _rule("schedules.list", _V, _K.LIST),
    ("POST", "/schedules"): _rule("schedules.create", _O, _K.START),
    ("GET", "/schedules/{schedule_id}"): _rule("schedules.read", _V, _K.SCHEDULE),
    ("PATCH", "/schedules/{schedule_id}"): _rule("schedules.update", _O, _K.SCHEDULE),
    ("DELETE", "/schedules/{schedule_id}"): _rule("schedules.delete", _O, _K.SCHEDULE),
    ("POST", "/schedules/{schedule_id}/pause"): _rule("schedules.pause", _O, _K.SCHEDULE),
    ("POST", "/schedules/{schedule_id}/unpause"): _rule("schedules.unpause", _O, _K.SCHEDULE),
    ("POST", "/schedules/{schedule_id}/trigger"): _rule("schedules.trigger", _O, _K.SCHEDULE),
    ("POST", "/schedules/{schedule_id}/backfill"): _rule("schedules.backfill", _O, _K.SCHEDULE),
    ("POST", "/agents/{agent_id}/events"): _rule("events.receive", None, _K.SIGNED),
    ("POST", "/events/{source}"): _rule("events.receive", None, _K.SIGNED),
    ("GET", "/dashboard/session"): _rule("session.read", _V, _K.APP),
    ("GET", "/inbox"): _rule("inbox.list", _V, _K.LIST),
    ("GET", "/inbox/answered"): _rule("inbox.answered", _V, _K.LIST),
    ("POST", "/inbox/answer"): _rule("runs.answer", _A, _K.BODY_RUN),
    ("GET", "/dashboard/runs"): _rule("runs.list", _V, _K.LIST),
    ("GET", "/dashboard/events"): _rule("runs.events", _V, _K.LIST),
    ("GET", "/metrics"): _rule("metrics.read", _ADMIN, _K.APP),
    ("GET", "/identity"): _rule("identity.read", None, _K.APP),
    ("GET", "/audit"): _rule("audit.read", _V, _K.LIST),
    ("POST", "/erasure"): _rule("erasure.erase", _ADMIN, _K.APP),
    ("POST", "/codec/encode"): _rule("codec.encode", _ADMIN, _K.APP),
    ("POST", "/codec/decode"): _rule("codec.decode", _ADMIN, _K.APP),
}
"""(method, path under the API prefix) → the route's rule; ``/metrics`` and the codec server (``/codec/...``: any
tenant's payloads, so administrators only) are served outside the prefix."""
