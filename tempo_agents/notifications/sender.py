"""Handing events to a run's delivery workflow, from the activity that records the change they report.

The hand-over is a signal-with-start of the run's delivery workflow (``delivery_workflow.py``): it starts the
workflow if it is not running and queues the event, in one call to Temporal, and returns at once; nothing waits for
a receiver. An activity retried after a lost worker hands the same event (same id) over again, which the delivery
workflow drops. Only channel names travel; the worker holds their secrets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from temporalio import activity

from tempo_agents.approvals import AnswerLinks, Choice, call_choices, people_of
from tempo_agents.notifications.channels import EmailChannel, NotificationSettings, SlackChannel
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

    def __init__(
        self,
        settings: NotificationSettings,
        answer_links: AnswerLinkMaker | None = None,
        members: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.settings = settings
        self.answer_links = answer_links
        self.members = {group: list(people) for group, people in (members or {}).items()}
        """Group name → its members (from the App's groups): each member of a call's group gets links of its own."""
        self._retry = DeliveryRetry(
            retry_for_seconds=settings.retry_for.total_seconds(),
            first_retry_seconds=settings.first_retry.total_seconds(),
            longest_interval_seconds=settings.longest_retry_interval.total_seconds(),
            attempt_seconds=settings.attempt_timeout.total_seconds(),
        )

    def links(self, run_id: str, call: LinkedCall | None = None) -> EventLinks:
        """The event's links: the run's dashboard page (with a public URL configured) and, for a waiting call, the
        answer links of the plugged-in maker (bound to its exact arguments, its round and its approvers; a
        question's options are its choices). With :class:`AnswerLinks`, each person the event reaches gets links
        of their own (``people``), and an interactive Slack channel gets button values. A call whose answers
        need sign-in gets the run's dashboard page for every answer, and nothing that answers by itself."""
        dashboard = dashboard_link(self.settings.public_url, run_id)
        maker = self.answer_links
        if call is None or maker is None:
            return EventLinks(dashboard=dashboard)
        choices = call_choices(call.kind, call.options)
        if call.sign_in:
            page = dashboard or (maker.dashboard_url(run_id) if isinstance(maker, AnswerLinks) else None)
            return EventLinks(dashboard=dashboard, answers=AnswerLinks.dashboard_answers(page, choices) if page else {})
        answers = dict(
            maker(
                run_id,
                call.tool_call_id,
                call.round,
                call.args,
                kind=call.kind,
                options=call.options,
                approvers=call.approvers,
            )
        )
        if not isinstance(maker, AnswerLinks):
            return EventLinks(dashboard=dashboard, answers=answers)
        return EventLinks(
            dashboard=dashboard,
            answers=answers,
            people=self._people_links(maker, run_id, call, choices) or None,
            buttons=self._button_values(maker, run_id, call, choices),
        )

    def _people(self, call: LinkedCall) -> list[str]:
        """Who gets links of their own: the call's approvers as people, then every email recipient."""
        people = people_of(call.approvers, self.members)
        for channel in self.settings.channels:
            if isinstance(channel, EmailChannel):
                people += [channel.principal_of(to) for to in channel.to if channel.principal_of(to) not in people]
        return people

    def _people_links(
        self, maker: AnswerLinks, run_id: str, call: LinkedCall, choices: Sequence[Choice]
    ) -> dict[str, dict[str, str]]:
        return {
            person: maker.answers_for(
                run_id=run_id,
                tool_call_id=call.tool_call_id,
                round=call.round,
                args=call.args,
                choices=choices,
                principal=person,
            )
            for person in self._people(call)
        }

    def _button_values(
        self, maker: AnswerLinks, run_id: str, call: LinkedCall, choices: Sequence[Choice]
    ) -> dict[str, str] | None:
        if not any(isinstance(c, SlackChannel) and c.interactive for c in self.settings.channels):
            return None
        return maker.button_values(
            run_id=run_id, tool_call_id=call.tool_call_id, round=call.round, args=call.args, choices=choices
        )

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
