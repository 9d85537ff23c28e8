"""The per-run delivery workflow: events in, each delivered to each of its channels, in order per channel.

Activities hand events over by signal-with-start (``sender.py``), so the run itself never waits for a receiver:
a receiver that is down delays only this workflow's activity, retried with backoff for hours. The workflow keeps
the ids of the events it has taken (an activity retried after a lost worker hands the same event over again: it
is dropped), queues each event per channel, and delivers a channel's events one after the other, so a receiver
gets a run's events in the order the run sent them. Every delivery is recorded (the ``deliveries`` query). When
its history grows long it continues as new with its queue; after the run's end is delivered and a quiet minute
has passed, it completes.

Workflow code: no I/O; the channels' secrets stay in the worker (the activity looks a channel up by name).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from tempo_agents.notifications.delivery_payloads import (
    DELIVER_NOTIFICATION,
    DELIVERIES_QUERY,
    EVENT_SIGNAL,
    MAX_KEPT_DELIVERIES,
    NOTIFICATION_DELIVERY_WORKFLOW,
    DeliveryInput,
    DeliveryOutcome,
    DeliveryRecord,
    DeliveryRetry,
    DeliveryStart,
    DeliveryState,
    NotificationEnvelope,
)
from tempo_agents.notifications.events import NotificationEvent

__all__ = ["QUIET_BEFORE_CLOSING", "NotificationDeliveryWorkflow"]

QUIET_BEFORE_CLOSING = timedelta(minutes=1)
"""How long the workflow stays open after the run's end was delivered, for late hand-overs of retried activities."""


@workflow.defn(name=NOTIFICATION_DELIVERY_WORKFLOW, sandboxed=False)
class NotificationDeliveryWorkflow:
    """Delivers one run's events to their channels (ARCHITECTURE.md, "Notifications")."""

    @workflow.init
    def __init__(self, start: DeliveryStart) -> None:
        carried = start.carried or DeliveryState()
        self._seen: dict[str, None] = dict.fromkeys(carried.seen)
        self._queues: dict[str, list[tuple[NotificationEvent, DeliveryRetry]]] = {}
        self._records: dict[tuple[str, str], DeliveryRecord] = {(r.event_id, r.channel): r for r in carried.deliveries}
        self._run_ended = carried.run_ended
        self._draining: set[str] = set()
        self._taken = 0
        for envelope in carried.queued:
            for channel in envelope.channels:
                self._queues.setdefault(channel, []).append((envelope.event, envelope.retry))

    @workflow.signal(name=EVENT_SIGNAL)
    def event(self, envelope: NotificationEnvelope) -> None:
        """An event to deliver; one already taken (same id) is dropped."""
        event = envelope.event
        if event.id in self._seen:
            return
        self._seen[event.id] = None
        self._taken += 1
        if event.type.startswith("run."):
            self._run_ended = True
        now = workflow.now()
        for channel in envelope.channels:
            self._queues.setdefault(channel, []).append((event, envelope.retry))
            self._records[(event.id, channel)] = DeliveryRecord(
                event_id=event.id,
                event_type=event.type,
                channel=channel,
                tool_call_id=event.call.tool_call_id if event.call is not None else None,
                queued_at=now,
            )

    @workflow.query(name=DELIVERIES_QUERY)
    def deliveries(self) -> list[DeliveryRecord]:
        """Every delivery of the run's events (the latest ``MAX_KEPT_DELIVERIES``), in the order they were queued."""
        return list(self._records.values())

    @workflow.run
    async def run(self, start: DeliveryStart) -> list[DeliveryRecord]:
        while True:
            taken = self._taken
            await workflow.wait_condition(
                lambda: bool(self._startable()) or self._continue_now() or self._all_delivered(),
            )
            for channel in self._startable():
                self._draining.add(channel)
                asyncio.create_task(self._drain(channel))  # noqa: RUF006 - awaited through _draining
            if self._continue_now():
                await workflow.wait_condition(lambda: not self._draining and workflow.all_handlers_finished())
                workflow.continue_as_new(DeliveryStart(run_id=start.run_id, carried=self._carried()))
            if self._all_delivered():
                try:
                    await workflow.wait_condition(self._taken_since(taken), timeout=QUIET_BEFORE_CLOSING)
                except TimeoutError:
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    if self._all_delivered():
                        return self.deliveries()

    def _taken_since(self, taken: int) -> Callable[[], bool]:
        return lambda: self._taken != taken

    def _startable(self) -> list[str]:
        return [channel for channel, queue in self._queues.items() if queue and channel not in self._draining]

    def _all_delivered(self) -> bool:
        return self._run_ended and not self._draining and not any(self._queues.values())

    def _continue_now(self) -> bool:
        return workflow.info().is_continue_as_new_suggested()

    async def _drain(self, channel: str) -> None:
        queue = self._queues[channel]
        try:
            while queue:
                event, retry = queue[0]
                await self._deliver(channel, event, retry)
                queue.pop(0)
        finally:
            self._draining.discard(channel)

    async def _deliver(self, channel: str, event: NotificationEvent, retry: DeliveryRetry) -> None:
        key = (event.id, channel)
        record = self._records[key].model_copy(update={"status": "delivering"})
        self._records[key] = record
        attempt_timeout, retry_for = retry.timeouts()
        try:
            outcome = await workflow.execute_activity(
                DELIVER_NOTIFICATION,
                DeliveryInput(channel=channel, event=event),
                result_type=DeliveryOutcome,
                start_to_close_timeout=attempt_timeout,
                schedule_to_close_timeout=retry_for,
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(seconds=retry.first_retry_seconds),
                    backoff_coefficient=2.0,
                    maximum_interval=timedelta(seconds=retry.longest_interval_seconds),
                    non_retryable_error_types=["ChannelMissing"],
                ),
                summary=f"{event.type} to {channel}",
            )
        except ActivityError as error:
            cause = error.cause
            message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
            self._records[key] = record.model_copy(
                update={"status": "failed", "ended_at": workflow.now(), "error": message[:500]}
            )
            return
        self._records[key] = record.model_copy(
            update={"status": "delivered", "ended_at": workflow.now(), "attempts": outcome.attempt}
        )

    def _carried(self) -> DeliveryState:
        queued = [
            NotificationEnvelope(event=event, channels=[channel], retry=retry)
            for channel, queue in self._queues.items()
            for event, retry in queue
        ]
        return DeliveryState(
            seen=list(self._seen)[-MAX_KEPT_DELIVERIES:],
            queued=queued,
            deliveries=list(self._records.values())[-MAX_KEPT_DELIVERIES:],
            run_ended=self._run_ended,
        )
