"""Reminders and escalation of a waiting call measured on workflow time, over days skipped by the time-skipping
dev server, and a receiver that is down for an hour of skipped time and then gets every event, in order. An
escalated call is in the inbox of whom it was escalated to as soon as the escalation is journaled (also with no
notifications configured), and an ``ask_user`` question is called a question by every event about it."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.notifications import NotificationSettings, WebhookChannel
from tempo_agents.notifications.delivery_payloads import delivery_workflow_id
from tempo_agents.server.dashboard.inbox import inbox_page
from tempo_agents.tools import ask_user_tool
from tempo_agents.workflows.payloads import PendingCall
from tests.conftest import closed_history, running_worker
from tests.support.notification_receivers import WebhookReceiver, settled_deliveries, webhook_receiver
from tests.support.polling import until

SECRET = "whsec_c2tpcHBpbmctdGltZS1zZWNyZXQtMTIzNDU2Nzg="


def refund_agent(agent_id: str, **tool_options: Any) -> Agent:
    tool = create_tool(
        id="refund",
        description="Refunds an order",
        input_schema={"type": "object", "properties": {"order": {"type": "integer"}}},
        execute=lambda data: {"refunded": data["order"]},
        require_approval=True,
        **tool_options,
    )
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("refund", {"order": 7})]), ScriptedResponse(text="Done.")]
    )
    return Agent(id=agent_id, model=model, tools={"refund": tool})


def make_app(env: WorkflowEnvironment, tmp_path: Path, agent: Agent, settings: NotificationSettings | None) -> App:
    return App(
        agents=[agent],
        store=f"sqlite:///{tmp_path / 's.db'}",
        task_queue=f"tq-{uuid.uuid4()}",
        client=env.client,
        notifications=settings,
    )


async def test_reminders_and_escalation_over_days(skipping_env: WorkflowEnvironment, tmp_path: Path) -> None:
    receiver = WebhookReceiver(secrets=[SECRET])
    with webhook_receiver(receiver):
        settings = NotificationSettings(channels=[WebhookChannel(name="ops", url=receiver.url, secrets=[SECRET])])
        agent = refund_agent(
            "reminded",
            suspend_expires_in=timedelta(days=4),
            remind_every=timedelta(days=1),
            escalate_after=timedelta(days=2),
            escalate_to=["group:managers"],
        )
        app = make_app(skipping_env, tmp_path, agent, settings)
        async with running_worker(app):
            stream = await app.agent("reminded").stream("refund order 7")
            handle = app.client.get_workflow_handle(stream.run_id)
            final = await handle.result()
            await until(lambda: "run.finished" in [e["type"] for e in receiver.events], timeout=90)
            history = await closed_history(app.client, stream.run_id)
            journal = [c.model_dump(by_alias=True) async for c in app.attach(stream.run_id).full_stream]
            offset = journal[-1]["offset"] + 1
            journal += [c.model_dump(by_alias=True) async for c in app.attach(stream.run_id, offset=offset).full_stream]

    assert final["finishReason"] == "stop"
    kinds = [(e["type"], e.get("reminder")) for e in receiver.events]
    assert kinds == [
        ("call.waiting", None),
        ("call.reminder", 1),
        ("call.escalated", None),
        ("call.reminder", 2),
        ("call.reminder", 3),
        ("call.expired", None),
        ("run.finished", None),
    ]
    escalated = receiver.events[2]
    assert escalated["escalatedTo"] == ["group:managers"]
    assert escalated["call"]["approvers"] == ["group:managers"]
    assert receiver.events[4]["call"]["approvers"] == ["group:managers"]  # reminders after it go to the managers
    assert receiver.events[5]["answer"]["expired"] is True
    timers = [
        e.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
        for e in history.events
        if e.HasField("timer_started_event_attributes")
    ]
    assert [round(t / timedelta(hours=1)) for t in timers] == [24, 24, 24, 24]
    notes = [(c["type"], c["data"]) for c in journal if c["type"] in ("data-call-reminder", "data-call-escalated")]
    assert notes == [
        ("data-call-reminder", {"toolCallId": "call_0_0", "toolName": "refund", "reminder": 1}),
        ("data-call-escalated", {"toolCallId": "call_0_0", "toolName": "refund", "approvers": ["group:managers"]}),
        ("data-call-reminder", {"toolCallId": "call_0_0", "toolName": "refund", "reminder": 2}),
        ("data-call-reminder", {"toolCallId": "call_0_0", "toolName": "refund", "reminder": 3}),
    ]


async def test_escalation_readdresses_the_waiting_call(skipping_env: WorkflowEnvironment, tmp_path: Path) -> None:
    receiver = WebhookReceiver()
    with webhook_receiver(receiver):
        settings = NotificationSettings(channels=[WebhookChannel(name="ops", url=receiver.url)])
        agent = refund_agent("escalated", escalate_after=timedelta(hours=8), escalate_to=["lead", "group:finance"])
        app = make_app(skipping_env, tmp_path, agent, settings)
        async with running_worker(app):
            stream = await app.agent("escalated").stream("refund order 7")
            handle: WorkflowHandle[Any, Any] = app.client.get_workflow_handle(stream.run_id)
            await until(lambda: "call.escalated" in [e["type"] for e in receiver.events], timeout=90)
            pending = await handle.query("pending", result_type=list[PendingCall])
            answer = await app.approve_tool_call("escalated", run_id=stream.run_id, answered_by="lead")
            assert (await answer.result()).finish_reason == "stop"

    assert [call.approvers for call in pending] == [["lead", "group:finance"]]
    assert pending[0].escalated is True


async def test_a_receiver_down_for_an_hour_gets_every_event_afterwards(
    skipping_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    receiver = WebhookReceiver(secrets=[SECRET])
    receiver.down = True
    with webhook_receiver(receiver):
        settings = NotificationSettings(
            channels=[WebhookChannel(name="ops", url=receiver.url, secrets=[SECRET])], retry_for=timedelta(days=2)
        )
        app = make_app(skipping_env, tmp_path, refund_agent("down"), settings)
        async with running_worker(app):
            stream = await app.agent("down").stream("refund order 7")
            assert (await stream.result()).finish_reason == "suspended"
            answer = await app.approve_tool_call("down", run_id=stream.run_id, answered_by="ada")
            assert (await answer.result()).finish_reason == "stop"  # the run never waited for the receiver
            delivery = app.client.get_workflow_handle(delivery_workflow_id(stream.run_id))
            started = (await delivery.describe()).start_time
            assert started is not None
            hour = timedelta(hours=1)
            while await skipping_env.get_current_time(delivery) < started + hour:
                await asyncio.sleep(0.2)
            refused = len(receiver.deliveries)
            receiver.down = False
            records = await settled_deliveries(app, stream.run_id, 3)

    assert refused >= 3
    assert all(status == 503 for status, _, _ in receiver.deliveries[:refused])
    assert [e["type"] for e in receiver.events] == ["call.waiting", "call.answered", "run.finished"]
    assert [r.status for r in records] == ["delivered", "delivered", "delivered"]
    assert records[0].attempts > 3


async def test_run_options_set_reminders_and_escalation(skipping_env: WorkflowEnvironment, tmp_path: Path) -> None:
    receiver = WebhookReceiver()
    with webhook_receiver(receiver):
        settings = NotificationSettings(channels=[WebhookChannel(name="ops", url=receiver.url)])
        agent = refund_agent("run-options", suspend_expires_in=timedelta(days=1))
        app = make_app(skipping_env, tmp_path, agent, settings)
        async with running_worker(app):
            stream = await app.agent("run-options").stream(
                "refund order 7",
                remind_every_seconds=8 * 3600,
                escalate_after_seconds=12 * 3600,
                escalate_to=["oncall"],
            )
            final = await app.client.get_workflow_handle(stream.run_id).result()
            await until(lambda: "run.finished" in [e["type"] for e in receiver.events], timeout=90)

    assert final["finishReason"] == "stop"
    assert [(e["type"], e.get("reminder"), e.get("escalatedTo")) for e in receiver.events] == [
        ("call.waiting", None, None),
        ("call.reminder", 1, None),
        ("call.escalated", None, ["oncall"]),
        ("call.reminder", 2, None),
        ("call.expired", None, None),
        ("run.finished", None, None),
    ]


async def test_an_escalated_call_waits_for_whom_it_was_escalated_to_in_the_inbox(
    skipping_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    agent = refund_agent(
        "inbox", approvers=["ada"], escalate_after=timedelta(hours=8), escalate_to=["lin", "group:leads"]
    )
    app = make_app(skipping_env, tmp_path, agent, None)  # no notifications: the escalation does not need them
    async with running_worker(app):
        stream = await app.agent("inbox").stream("refund order 7")

        async def escalation_journaled() -> bool:
            return "data-call-escalated" in [e.chunk["type"] for e in await app.store.read_chunks(stream.run_id)]

        deadline = asyncio.get_running_loop().time() + 90
        while not await escalation_journaled():
            assert asyncio.get_running_loop().time() < deadline, "no escalation"
            await asyncio.sleep(0.1)
        # read right after the note: the store changed the waiting call in the note's transaction
        lin = await inbox_page(app, agent=None, per_page=10, cursor=None, principal="lin")
        lead = await inbox_page(app, agent=None, per_page=10, cursor=None, principal="kim", groups=["leads"])
        ada = await inbox_page(app, agent=None, per_page=10, cursor=None, principal="ada")
        answer = await app.approve_tool_call("inbox", run_id=stream.run_id, answered_by="lin")
        assert (await answer.result()).finish_reason == "stop"
        after = await inbox_page(app, agent=None, per_page=10, cursor=None, principal="lin", groups=["leads"])

    [lead_item] = lead["items"]
    assert (lead_item["runId"], lead_item["toolCallId"], lead_item["kind"]) == (stream.run_id, "call_0_0", "approval")
    assert (lead_item["waitingForMe"], lead_item["mayAnswer"]) == (True, True)
    assert lead_item["approvers"] == ["lin", "group:leads"]
    assert [(i["waitingForMe"], i["mayAnswer"]) for i in lin["items"]] == [(True, True)]
    [ada_item] = ada["items"]
    assert (ada_item["waitingForMe"], ada_item["mayAnswer"]) == (False, False)
    assert after["items"] == []


async def test_a_question_is_called_a_question_by_every_event(
    skipping_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    receiver = WebhookReceiver()
    with webhook_receiver(receiver):
        settings = NotificationSettings(channels=[WebhookChannel(name="ops", url=receiver.url)])
        question = ScriptedToolCall("ask_user", {"question": "Which order?"})
        model = ScriptedModel([ScriptedResponse(tool_calls=[question]), ScriptedResponse(text="Done.")])
        agent = Agent(id="asker", model=model, tools={"ask_user": ask_user_tool})
        app = make_app(skipping_env, tmp_path, agent, settings)
        async with running_worker(app):
            stream = await app.agent("asker").stream(
                "refund an order", remind_every_seconds=3 * 3600, escalate_after_seconds=4 * 3600, escalate_to=["lin"]
            )
            await until(lambda: "call.escalated" in [e["type"] for e in receiver.events], timeout=90)
            done = await app.resume_generate("asker", "Order 7", run_id=stream.run_id, answered_by="lin")
            await until(lambda: "run.finished" in [e["type"] for e in receiver.events], timeout=90)

    assert done.finish_reason == "stop"
    calls = [(e["type"], e["call"]["kind"]) for e in receiver.events if "call" in e]
    assert calls == [
        ("call.waiting", "question"),
        ("call.reminder", "question"),
        ("call.escalated", "question"),
        ("call.answered", "question"),
    ]


async def test_an_expired_question_is_called_a_question(skipping_env: WorkflowEnvironment, tmp_path: Path) -> None:
    receiver = WebhookReceiver()
    with webhook_receiver(receiver):
        settings = NotificationSettings(channels=[WebhookChannel(name="ops", url=receiver.url)])
        question = ScriptedToolCall("ask_user", {"question": "Which order?"})
        model = ScriptedModel([ScriptedResponse(tool_calls=[question]), ScriptedResponse(text="Done.")])
        agent = Agent(
            id="unanswered", model=model, tools={"ask_user": ask_user_tool}, suspend_expires_in=timedelta(days=1)
        )
        app = make_app(skipping_env, tmp_path, agent, settings)
        async with running_worker(app):
            stream = await app.agent("unanswered").stream("refund an order")
            # ask_user asks again once its question expired (ctx.expired): the second wait follows the expiry
            await until(lambda: [e["type"] for e in receiver.events].count("call.waiting") == 2, timeout=90)
            await app.client.get_workflow_handle(stream.run_id).terminate("the test saw what it reads")

    calls = [(e["type"], e["call"]["kind"], e["call"]["round"]) for e in receiver.events if "call" in e]
    assert calls[:3] == [
        ("call.waiting", "question", 0),
        ("call.expired", "question", 0),
        ("call.waiting", "question", 1),
    ]
