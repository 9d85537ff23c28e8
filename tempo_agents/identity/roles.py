"""The roles a principal holds in a tenant, and which of them grant what another names."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Role"]


class Role(StrEnum):
    """What a principal may do in a tenant.

    - ``viewer``: read runs, their streams, threads, inbox items and schedules.
    - ``approver``: what a viewer may, and answer the calls assigned to them (or open to anyone).
    - ``operator``: what a viewer may, and start, cancel, steer, interrupt, roll back, fork and retry runs,
      and change budgets, schedules and events.
    - ``admin``: everything, configuration views included.
    """

    VIEWER = "viewer"
    APPROVER = "approver"
    OPERATOR = "operator"
    ADMIN = "admin"

    def grants(self, needed: Role) -> bool:
        """Whether holding this role is enough for an action that needs ``needed``."""
        if self is needed or self is Role.ADMIN:
            return True
        return needed is Role.VIEWER
