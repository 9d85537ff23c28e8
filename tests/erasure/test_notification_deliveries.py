"""A run's notifications go through a delivery workflow of its own (its id: the run's, then ``-notifications``),
whose history holds what the events said: the waiting call's arguments, who answered. Erasing the run's resource
deletes it with the run, and so does retention once the run's records expire: the stock ``temporal`` CLI no longer
shows it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents import App
from tempo_agents.notifications import NotificationSettings, WebhookChannel, delivery_workflow_id
from tempo_agents.retention import Retention, RetentionSweeper
from tests.conftest import AppFactory, running_worker
from tests.support.approval_agents import payments_agent
from tests.support.notification_receivers import WebhookReceiver, webhook_receiver
from tests.support.polling import until
from tests.support.temporal_cli import show_history

pytestmark = pytest.mark.timeout(600)  # an erasure may wait a minute for Temporal to delete a closed execution

SECRET_ARGS = {"amount": 4410, "to": "INITECH-PAYEE-5512"}


@contextmanager
def _notifying_app(
    make_app: AppFactory, ran: list[dict[str, Any]], **options: Any
) -> Iterator[tuple[App, WebhookReceiver]]:
    """An App whose payments agent asks to approve a transfer of ``SECRET_ARGS`` (``ran``: the transfers made), its
    events delivered to a webhook receiver on 127.0.0.1."""
    receiver = WebhookReceiver()
    with webhook_receiver(receiver):
        settings = NotificationSettings(channels=[WebhookChannel(name="ops", url=receiver.url)])
        agent, _ = payments_agent(ran, calls=[SECRET_ARGS])
        yield make_app([agent], notifications=settings, **options), receiver


async def _shown(env: WorkflowEnvironment, workflow_id: str) -> bool:
    code, _ = await show_history(env.client, workflow_id)
    return code == 0


async def test_erasing_a_resource_deletes_its_runs_notification_deliveries(
    make_app: AppFactory, temporal_env: WorkflowEnvironment
) -> None:
    ran: list[dict[str, Any]] = []
    with _notifying_app(make_app, ran) as (app, receiver):
        async with running_worker(app):
            waiting = await app.generate("payments", "pay", memory={"thread": "t1", "resource": "initech-notified"})
            assert waiting.finish_reason == "suspended"
            await until(lambda: len(receiver.events) >= 1, timeout=60)
            assert receiver.events[0]["call"]["args"] == SECRET_ARGS
            deliveries = delivery_workflow_id(waiting.run_id)
            assert await _shown(temporal_env, deliveries)

            report = await app.erase(resource="initech-notified")

            assert report.stopped == [waiting.run_id]
            assert not await _shown(temporal_env, deliveries)
            assert not await _shown(temporal_env, waiting.run_id)
    assert ran == []


async def test_retention_deletes_an_expired_runs_notification_deliveries(
    make_app: AppFactory, temporal_env: WorkflowEnvironment
) -> None:
    ran: list[dict[str, Any]] = []
    retention = Retention(keep=timedelta(days=1))
    with _notifying_app(make_app, ran, retention=retention) as (app, receiver):
        now = [time.time()]
        sweeper = RetentionSweeper(app.client, app.store, app.task_queue, retention, clock=lambda: now[0])
        async with running_worker(app):
            waiting = await app.generate("payments", "pay")
            answered = await app.approve_tool_call("payments", run_id=waiting.run_id, answered_by="grace")
            assert (await answered.result()).finish_reason == "stop"
            await until(lambda: [event["type"] for event in receiver.events][-1:] == ["run.finished"], timeout=60)
            deliveries = delivery_workflow_id(waiting.run_id)
            assert await _shown(temporal_env, deliveries)

            async def noted() -> bool:
                return bool((await sweeper.sweep()).noted)

            await until(noted, timeout=60)  # the run closes, and visibility lists it, within moments
            now[0] += timedelta(days=1, minutes=1).total_seconds()
            assert (await sweeper.sweep()).deleted == [waiting.run_id]
            await until(lambda: _gone(temporal_env, deliveries), timeout=90)
    assert ran == [SECRET_ARGS]


async def _gone(env: WorkflowEnvironment, workflow_id: str) -> bool:
    return not await _shown(env, workflow_id)
