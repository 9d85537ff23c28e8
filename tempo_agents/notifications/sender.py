"""Handing events to a run's delivery workflow, from the activity that records the change they report.

The hand-over is a signal-with-start of the run's delivery workflow (``delivery_workflow.py``): it starts the
workflow if it is not running and queues the event, in one call to Temporal, and returns at once; nothing waits for
a receiver. An activity retried after a lost worker hands the same event (same id) over again, which the delivery
workflow drops. Only channel names travel; the worker holds their secrets.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio import activity

from tempo_agents.notifications.channels import NotificationSettings
from tempo_agents.notifications.delivery_payloads import (
    EVENT_SIGNAL,
    NOTIFICATION_DELIVERY_WORKFLOW,
    DeliveryRetry,
    DeliveryStart,
    NotificationEnvelope,
    delivery_workflow_id,
)
from tempo_agents.notifications.events import AnswerLinkMaker, EventLinks, LinkedCall, NotificationEvent, dashboard_link

__all__ = ["NotificationSender"]


class NotificationSender:
    """What an App's activities need to notify: the channels and how to link to the dashboard and answers."""

    def __init__(self, settings: NotificationSettings, answer_links: AnswerLinkMaker | None = None) -> None:
        self.settings = settings
        self.answer_links = answer_links
        self._retry = DeliveryRetry(
            retry_for_seconds=settings.retry_for.total_seconds(),
            first_retry_seconds=settings.first_retry.total_seconds(),
            longest_interval_seconds=settings.longest_retry_interval.total_seconds(),
            attempt_seconds=settings.attempt_timeout.total_seconds(),
        )

    def links(self, run_id: str, call: LinkedCall | None = None) -> EventLinks:
        """The event's links: the run's dashboard page (with a public URL configured) and, for a waiting call, the
        answer links of the plugged-in maker (bound to its exact arguments, its round and its approvers; a
        question's options are its choices)."""
        answers: dict[str, str] = {}
        if call is not None and self.answer_links is not None:
            answers = dict(
                self.answer_links(
                    run_id,
                    call.tool_call_id,
                    call.round,
                    call.args,
                    kind=call.kind,
                    options=call.options,
                    approvers=call.approvers,
                )
            )
        return EventLinks(dashboard=dashboard_link(self.settings.public_url, run_id), answers=answers)

    async def send(self, run_id: str, events: Sequence[NotificationEvent], channels: list[str] | None) -> None:
        """Queue ``events`` for the channels chosen (``None``: the App's default) that want their type."""
        if not activity.in_activity():
            return
        chosen = self.settings.chosen(channels)
        client = activity.client()
        task_queue = activity.info().task_queue
        for event in events:
            names = [name for name in chosen if self.settings.channel(name).wants(event.type)]
            if not names:
                continue
            await client.start_workflow(
                NOTIFICATION_DELIVERY_WORKFLOW,
                DeliveryStart(run_id=run_id),
                id=delivery_workflow_id(run_id),
                task_queue=task_queue,
                start_signal=EVENT_SIGNAL,
                start_signal_args=[NotificationEnvelope(event=event, channels=names, retry=self._retry)],
            )
