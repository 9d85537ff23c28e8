"""The HTTP face of the audit trail: each route's action (:data:`ROUTE_ACTIONS`), its intent recorded before the
route acts (:func:`record_intent`, a dependency of every router), its completion and refused sign-ins recorded as the
answer leaves (:class:`AuditTrail`), and ``GET /audit`` (:data:`audit_router`)."""

from tempo_agents.server.audit.actions import ROUTE_ACTIONS, RouteAction
from tempo_agents.server.audit.completion import SIGN_IN, AuditTrail
from tempo_agents.server.audit.intents import (
    PendingAction,
    completion_entries,
    mark_completed,
    note_audit,
    requester,
)
from tempo_agents.server.audit.listing import router as audit_router
from tempo_agents.server.audit.recording import record_intent

__all__ = [
    "ROUTE_ACTIONS",
    "SIGN_IN",
    "AuditTrail",
    "PendingAction",
    "RouteAction",
    "audit_router",
    "completion_entries",
    "mark_completed",
    "note_audit",
    "record_intent",
    "requester",
]
