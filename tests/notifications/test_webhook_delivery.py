"""Events of a run delivered to a webhook that verifies signatures and refuses the first deliveries: each event
once, in order, signed with every secret of a rotation, and nothing secret anywhere."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.metrics.run_metrics import NOTIFICATION_DELIVERIES
from tempo_agents.notifications import NotificationSettings, WebhookChannel
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served
from tests.support.notification_receivers import WebhookReceiver, settled_deliveries, webhook_receiver
from tests.support.polling import until

OLD_SECRET = "whsec_b2xkLXNlY3JldC1vbGQtc2VjcmV0LW9sZA=="
NEW_SECRET = "whsec_bmV3LXNlY3JldC1uZXctc2VjcmV0LW5ldw=="


def approval_agent(agent_id: str) -> Agent:
    delete = create_tool(
        id="delete_user",
        description="Deletes a user",
        input_schema={"type": "object", "properties": {"user": {"type": "string"}}},
        execute=lambda data: {"deleted": data["user"]},
        require_approval=True,
    )
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("delete_user", {"user": "ada"})]),
            ScriptedResponse(text="Deleted."),
        ]
    )
    return Agent(id=agent_id, model=model, tools={"delete_user": delete})


async def test_every_event_arrives_once_in_order_after_refused_deliveries(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    # the receiver knows only the new secret; the App signs with both (a rotation in progress)
    receiver = WebhookReceiver(secrets=[NEW_SECRET], fail_first=2)
    with webhook_receiver(receiver):
        settings = NotificationSettings(
            channels=[WebhookChannel(name="ops", url=receiver.url, secrets=[OLD_SECRET, NEW_SECRET])],
            public_url="https://agents.example.test/",
            first_retry=timedelta(milliseconds=100),
        )
        app = make_app([approval_agent("deleter")], notifications=settings)
        async with running_worker(app):
            stream = await app.agent("deleter").stream("delete ada")
            first = await stream.result()
            assert first.finish_reason == "suspended"
            await until(lambda: len(receiver.events) >= 1, timeout=60)
            answer = await app.approve_tool_call("deleter", run_id=stream.run_id, answered_by="grace")
            assert (await answer.result()).finish_reason == "stop"
            records = await settled_deliveries(app, stream.run_id, 3)
            journal = [chunk async for chunk in app.attach(stream.run_id).full_stream]
            async with served(app) as http:
                detail = (await http.get(f"/runs/{stream.run_id}")).json()

    events = receiver.events
    assert [e["type"] for e in events] == ["call.waiting", "call.answered", "run.finished"]
    assert len(set(receiver.ids())) == 3
    waiting = events[0]
    assert waiting["runId"] == stream.run_id
    assert waiting["agentId"] == "deleter"
    assert waiting["call"]["toolName"] == "delete_user"
    assert waiting["call"]["kind"] == "approval"
    assert waiting["call"]["args"] == {"user": "ada"}
    assert waiting["links"] == {"dashboard": f"https://agents.example.test/#/runs/{stream.run_id}", "answers": {}}
    assert events[1]["answer"] == {"action": "approve", "answeredBy": "grace", "expired": False}
    assert events[2]["run"] == {"finishReason": "stop"}
    # the two refused deliveries were the first event's; then each event was taken once
    assert [status for status, _, _ in receiver.deliveries] == [500, 500, 204, 204, 204]
    signed = receiver.deliveries[-1][1]
    assert signed["webhook-id"] == events[2]["id"]
    assert len(signed["webhook-signature"].split(" ")) == 2
    assert [(r.event_type, r.status, r.attempts) for r in records] == [
        ("call.waiting", "delivered", 3),
        ("call.answered", "delivered", 1),
        ("run.finished", "delivered", 1),
    ]
    assert [(d["eventType"], d["channel"], d["status"], d["attempts"]) for d in detail["notifications"]] == [
        ("call.waiting", "ops", "delivered", 3),
        ("call.answered", "ops", "delivered", 1),
        ("run.finished", "ops", "delivered", 1),
    ]
    delivered = NOTIFICATION_DELIVERIES.labels("ops", "call.waiting", "delivered")._value.get()
    refused = NOTIFICATION_DELIVERIES.labels("ops", "call.waiting", "failed-attempt")._value.get()
    assert (delivered, refused) >= (1, 2)
    everything = repr(events) + caplog.text + repr([c.model_dump() for c in journal])
    for secret in (OLD_SECRET, NEW_SECRET, OLD_SECRET.removeprefix("whsec_"), NEW_SECRET.removeprefix("whsec_")):
        assert secret not in everything


async def test_a_hanging_receiver_neither_blocks_nor_slows_the_run(make_app: AppFactory) -> None:
    receiver = WebhookReceiver()
    receiver.hang, receiver.hang_first = 15.0, 2
    with webhook_receiver(receiver):
        settings = NotificationSettings(
            channels=[WebhookChannel(name="ops", url=receiver.url)],
            attempt_timeout=timedelta(seconds=1),
            first_retry=timedelta(milliseconds=100),
        )
        app = make_app([approval_agent("hung")], notifications=settings)
        async with running_worker(app):
            stream = await app.agent("hung").stream("delete ada")
            assert (await stream.result()).finish_reason == "suspended"
            answer = await app.approve_tool_call("hung", run_id=stream.run_id)
            assert (await answer.result()).finish_reason == "stop"
            hanging_still = len(receiver.deliveries) < 2  # the hung requests have not been answered yet
            records = await settled_deliveries(app, stream.run_id, 3)

    assert hanging_still
    assert [e["type"] for e in receiver.events] == ["call.waiting", "call.answered", "run.finished"]
    assert len(set(receiver.ids())) == 3
    assert [r.status for r in records] == ["delivered"] * 3
    assert records[0].attempts >= 2  # its first attempt timed out on the hanging receiver


async def test_an_attempt_that_timed_out_is_abandoned_so_a_slow_receiver_gets_no_late_duplicate(
    make_app: AppFactory,
) -> None:
    # the first request is held longer than an attempt may take; the receiver then takes it only if the sender
    # still waits for the answer, as a receiver that commits a delivery only when it can answer does
    receiver = WebhookReceiver()
    receiver.hang, receiver.hang_first, receiver.accept_after_hang = 8.0, 1, True
    with webhook_receiver(receiver):
        settings = NotificationSettings(
            channels=[WebhookChannel(name="ops", url=receiver.url)],
            attempt_timeout=timedelta(seconds=2),
            first_retry=timedelta(milliseconds=100),
        )
        app = make_app([approval_agent("slow")], notifications=settings)
        async with running_worker(app):
            stream = await app.agent("slow").stream("delete ada")
            assert (await stream.result()).finish_reason == "suspended"
            records = await settled_deliveries(app, stream.run_id, 1)
            await until(lambda: receiver.held == 1, timeout=60)  # the held request has ended, one way or the other

    assert [(r.event_type, r.status, r.attempts) for r in records] == [("call.waiting", "delivered", 2)]
    assert receiver.abandoned == 1  # the attempt that timed out hung up on its request
    assert [e["type"] for e in receiver.events] == ["call.waiting"]  # delivered once: by the retry, never late
    assert [status for status, _, _ in receiver.deliveries] == [204]


async def test_an_attempt_timeout_above_twenty_seconds_is_honoured(make_app: AppFactory) -> None:
    receiver = WebhookReceiver()
    receiver.hang, receiver.hang_first, receiver.accept_after_hang = 22.0, 1, True  # answers after 22 s
    with webhook_receiver(receiver):
        settings = NotificationSettings(
            channels=[WebhookChannel(name="ops", url=receiver.url)],
            attempt_timeout=timedelta(seconds=30),
            first_retry=timedelta(milliseconds=100),
        )
        app = make_app([approval_agent("patient")], notifications=settings)
        async with running_worker(app):
            stream = await app.agent("patient").stream("delete ada")
            assert (await stream.result()).finish_reason == "suspended"
            records = await settled_deliveries(app, stream.run_id, 1)

    # the first attempt waited the 22 s for its answer: one attempt, one delivery
    assert [(r.event_type, r.status, r.attempts) for r in records] == [("call.waiting", "delivered", 1)]
    assert (receiver.abandoned, [status for status, _, _ in receiver.deliveries]) == (0, [204])
