"""Deliveries outlive the Temporal server: the receiver is down while a run waits, the dev server (a file-backed
one) and the worker stop in the middle of the retries, and after both are back every event arrives once, in
order."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.notifications import NotificationSettings, WebhookChannel
from tempo_agents.worker.dev_server import DevServer, free_port
from tests.support.notification_receivers import WebhookReceiver, settled_deliveries, webhook_receiver


def build(store: str, task_queue: str, client: Client, url: str) -> App:
    archive = create_tool(id="archive", description="Archives", execute=lambda d: "archived", require_approval=True)
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("archive", {})]), ScriptedResponse(text="Archived.")]
    )
    settings = NotificationSettings(
        channels=[WebhookChannel(name="ops", url=url)],
        first_retry=timedelta(milliseconds=200),
        longest_retry_interval=timedelta(seconds=1),
    )
    agent = Agent(id="archiver", model=model, tools={"archive": archive})
    return App(agents=[agent], store=store, task_queue=task_queue, client=client, notifications=settings)


async def test_a_restarted_dev_server_delivers_every_event_once(tmp_path: Path) -> None:
    db, store, task_queue, port = (
        tmp_path / "temporal.db",
        f"sqlite:///{tmp_path / 's.db'}",
        f"tq-{uuid.uuid4()}",
        free_port(),
    )
    receiver = WebhookReceiver()
    receiver.down = True
    with webhook_receiver(receiver):
        async with DevServer(db_filename=db, port=port) as server:
            client = await Client.connect(server.address, data_converter=pydantic_data_converter)
            app = build(store, task_queue, client, receiver.url)
            async with app.worker():
                first = await app.agent("archiver").generate("archive it")
                while len(receiver.deliveries) < 2:
                    await asyncio.sleep(0.05)
        refused = len(receiver.deliveries)
        receiver.down = False
        async with DevServer(db_filename=db, port=port) as server:
            client = await Client.connect(server.address, data_converter=pydantic_data_converter)
            app = build(store, task_queue, client, receiver.url)
            async with app.worker():
                answer = await app.approve_tool_call("archiver", run_id=first.run_id, answered_by="kim")
                assert (await answer.result()).finish_reason == "stop"
                records = await settled_deliveries(app, first.run_id, 3)

    assert first.finish_reason == "suspended"
    assert refused >= 2
    assert [e["type"] for e in receiver.events] == ["call.waiting", "call.answered", "run.finished"]
    assert len(set(receiver.ids())) == 3
    assert [r.status for r in records] == ["delivered"] * 3
