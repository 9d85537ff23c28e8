"""Erasure on request: everything of a resource, a thread or a run deleted from the store and from Temporal.

``App.erase(resource=...)``, ``tempo-agents erase --resource acme`` and ``POST /api/erasure`` (admins) call
:func:`erase_scope`, which says what it did by id only (:class:`ErasureReport`)."""

from tempo_agents.erasure.erasing import erase_scope
from tempo_agents.erasure.scope import ErasureReport, ErasureScope

__all__ = ["ErasureReport", "ErasureScope", "erase_scope"]
