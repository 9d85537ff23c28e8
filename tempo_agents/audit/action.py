"""One action as a listing shows it: its intent (or its only record) and the record that completed it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tempo_agents.audit.entry import AuditRecord

__all__ = ["AuditAction"]


@dataclass(frozen=True)
class AuditAction:
    """``record`` is the action's first record; ``completion`` the one that gave its outcome (``None``: recorded in
    one record, or still ``pending``)."""

    record: AuditRecord
    completion: AuditRecord | None = None

    def wire(self) -> dict[str, Any]:
        """The first record's wire shape with the completion's outcome, status, code and time (``completedAt``);
        what only the completion knew (the run a start made, an answer link's principal and call) is shown too."""
        shown = self.record.wire()
        done = self.completion
        shown["completedAt"] = None if done is None else done.entry.at
        if done is not None:
            shown["outcome"] = done.entry.outcome
            shown["status"] = done.entry.status
            shown["code"] = done.entry.code
            shown["principal"] = shown["principal"] or done.entry.principal
            shown["target"] = done.entry.target or shown["target"]
            shown["tenant"] = shown["tenant"] or done.entry.tenant
        return shown
