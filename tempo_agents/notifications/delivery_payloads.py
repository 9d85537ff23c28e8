"""What the delivery workflow carries: events with the channels they go to, the retry settings, and the record of
each delivery (the ``deliveries`` query)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from tempo_agents._wire import WireModel
from tempo_agents.notifications.events import NotificationEvent

__all__ = [
    "DELIVERIES_QUERY",
    "DELIVER_NOTIFICATION",
    "EVENT_SIGNAL",
    "MAX_KEPT_DELIVERIES",
    "NOTIFICATION_DELIVERY_WORKFLOW",
    "DeliveryInput",
    "DeliveryOutcome",
    "DeliveryRecord",
    "DeliveryRetry",
    "DeliveryStart",
    "DeliveryState",
    "NotificationEnvelope",
    "delivery_workflow_id",
]

NOTIFICATION_DELIVERY_WORKFLOW = "TempoAgentsNotifications"
"""The delivery workflow's name (one per run)."""
DELIVER_NOTIFICATION = "tempo_agents.deliver_notification"
"""The activity that sends one event to one channel."""
EVENT_SIGNAL = "event"
"""The signal (with start) an event is handed over by."""
DELIVERIES_QUERY = "deliveries"

MAX_KEPT_DELIVERIES = 500
"""How many delivery records (newest) and event ids a delivery workflow carries across continue-as-new."""


def delivery_workflow_id(run_id: str) -> str:
    """The id of the run's delivery workflow."""
    return f"{run_id}-notifications"


class DeliveryRetry(WireModel):
    """How one delivery is retried: backoff from ``first_retry_seconds`` doubling up to ``longest_interval_seconds``,
    each attempt given ``attempt_seconds``, for ``retry_for_seconds`` in all."""

    retry_for_seconds: float = 24 * 3600.0
    first_retry_seconds: float = 1.0
    longest_interval_seconds: float = 600.0
    attempt_seconds: float = 30.0

    def timeouts(self) -> tuple[timedelta, timedelta]:
        return timedelta(seconds=self.attempt_seconds), timedelta(seconds=self.retry_for_seconds)


class NotificationEnvelope(WireModel):
    """An event and the channels (by name) it goes to."""

    event: NotificationEvent
    channels: list[str]
    retry: DeliveryRetry = Field(default_factory=DeliveryRetry)


class DeliveryRecord(WireModel):
    """One event's delivery to one channel: ``queued``, ``delivering``, ``delivered`` or ``failed`` (retried for
    the whole ``retry_for`` in vain)."""

    event_id: str
    event_type: str
    channel: str
    tool_call_id: str | None = None
    status: Literal["queued", "delivering", "delivered", "failed"] = "queued"
    attempts: int = 0
    """The attempts made (known once it is delivered or failed)."""
    queued_at: datetime
    ended_at: datetime | None = None
    error: str | None = None


class DeliveryState(WireModel):
    """What a delivery workflow carries across continue-as-new."""

    seen: list[str] = Field(default_factory=list)
    queued: list[NotificationEnvelope] = Field(default_factory=list)
    deliveries: list[DeliveryRecord] = Field(default_factory=list)
    run_ended: bool = False


class DeliveryStart(WireModel):
    """The delivery workflow's input."""

    run_id: str
    carried: DeliveryState | None = None


class DeliveryInput(WireModel):
    """The delivery activity's input: one event for one channel (named: the worker holds its secrets)."""

    channel: str
    event: NotificationEvent


class DeliveryOutcome(WireModel):
    """A delivery that went through: on which attempt, and what the receiver answered."""

    attempt: int
    status_code: int | None = None
