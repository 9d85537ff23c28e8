"""Which audit records a listing wants: filters, a page size and a cursor (the ``seq`` to list before)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

__all__ = ["AuditQuery"]


@dataclass(frozen=True)
class AuditQuery:
    """A listing of actions, newest first; each ``None`` filter matches everything.

    ``tenants`` limits the listing to those tenants (a principal that sees only some); ``None`` lists every tenant's
    records and those without one. ``since`` and ``until`` are times as :func:`~tempo_agents.audit.audit_time` writes
    them (``since`` included, ``until`` not). ``before`` is the cursor: only records with a smaller ``seq``.
    """

    principal: str | None = None
    tenant: str | None = None
    action: str | None = None
    target: str | None = None
    since: str | None = None
    until: str | None = None
    tenants: Collection[str] | None = None
    before: int | None = None
    limit: int = 50
