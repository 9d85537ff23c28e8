"""Erasure on request: everything of a resource, a thread or a run deleted from the store and from Temporal.

``App.erase(resource=...)``, ``tempo-agents erase --resource acme`` and ``POST /api/erasure`` (admins) call
:func:`erase_scope`, which says what it did by id only (:class:`ErasureReport`)."""

from tempo_agents.erasure.erasing import ERASED_REASON, erase_scope, schedules_of
from tempo_agents.erasure.executions import Execution, scope_executions, scope_query
from tempo_agents.erasure.scope import ErasureReport, ErasureScope

__all__ = [
    "ERASED_REASON",
    "ErasureReport",
    "ErasureScope",
    "Execution",
    "erase_scope",
    "schedules_of",
    "scope_executions",
    "scope_query",
]
