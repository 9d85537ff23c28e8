"""An escalation as the store keeps it: the waiting call re-addressed to its new approvers.

The workflow re-addresses an escalated call in its own state and memo; the journal activity that writes the
escalation's note hands the new approvers to the store in the same transaction, so the inbox and the listings
of waiting runs (read from the store) show the call to whom it was escalated as soon as the note can be read,
whether or not notifications are configured.
"""

from __future__ import annotations

from collections.abc import Sequence

from tempo_agents.store.base import ReaddressedCall, WaitingChange
from tempo_agents.workflows.payloads import CallAlarm

__all__ = ["escalated_calls"]


def escalated_calls(alarms: Sequence[CallAlarm]) -> WaitingChange | None:
    """The waiting calls the escalations among ``alarms`` re-address (each in the round it waits in), or ``None``."""
    readdressed = [
        ReaddressedCall(alarm.call.tool_call_id, alarm.call.round, list(alarm.call.approvers), escalated=True)
        for alarm in alarms
        if alarm.kind == "escalated"
    ]
    return WaitingChange(readdressed=readdressed) if readdressed else None
