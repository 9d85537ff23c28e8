"""Which audit records a listing wants: filters, a page size and a cursor (the ``seq`` to list before)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

from tempo_agents.audit.entry import audit_time

__all__ = ["AuditQuery", "parse_audit_time"]


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


def parse_audit_time(value: str | None) -> str | None:
    """An ISO 8601 time (a date, or a date and time; without a zone: UTC) as the trail writes times, for ``since``
    and ``until`` (``None``: none); ``ValueError`` when ``value`` is not one."""
    if value is None:
        return None
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return audit_time(moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC))
