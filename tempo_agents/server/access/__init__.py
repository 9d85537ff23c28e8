"""Authorization: the one place every route passes through (the role a route needs, the tenant it touches, the
policy hook), and the tenants a principal may see, by which listings are filtered."""

from tempo_agents.server.access.guard import access_dependency
from tempo_agents.server.access.policy import AccessTarget, Decision, Filter, Policy, Verdict
from tempo_agents.server.access.principals import request_principal
from tempo_agents.server.access.route_rules import ROUTE_RULES, RouteRule, TargetKind
from tempo_agents.server.access.tenants import run_tenant
from tempo_agents.server.access.visibility import Visibility, visible_tenants

__all__ = [
    "ROUTE_RULES",
    "AccessTarget",
    "Decision",
    "Filter",
    "Policy",
    "RouteRule",
    "TargetKind",
    "Verdict",
    "Visibility",
    "access_dependency",
    "request_principal",
    "run_tenant",
    "visible_tenants",
]
