"""The run's page on the dashboard (a real Chromium) lists its notification events and how each delivery went."""

from __future__ import annotations

from datetime import timedelta

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.notifications import NotificationSettings, WebhookChannel
from tests.conftest import AppFactory, running_worker
from tests.support.browser import chromium, dashboard_server, signed_in_page
from tests.support.notification_receivers import WebhookReceiver, settled_deliveries, webhook_receiver


async def test_the_run_page_shows_each_delivery(make_app: AppFactory) -> None:
    receiver = WebhookReceiver(fail_first=1)
    with webhook_receiver(receiver):
        settings = NotificationSettings(
            channels=[WebhookChannel(name="pager", url=receiver.url)], first_retry=timedelta(milliseconds=100)
        )
        ship = create_tool(id="ship", description="Ships", execute=lambda d: "shipped", require_approval=True)
        model = ScriptedModel([ScriptedResponse(tool_calls=[ScriptedToolCall("ship", {})])])
        app = make_app([Agent(id="shipper", model=model, tools={"ship": ship})], notifications=settings)
        async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
            stream = await app.agent("shipper").stream("ship it")
            await stream.result()
            await settled_deliveries(app, stream.run_id, 1)
            _, page = await signed_in_page(browser, server, None, path=f"/#/runs/{stream.run_id}")
            section = page.get_by_role("region", name="Notifications")
            await section.get_by_text("call.waiting").wait_for()
            text = await section.inner_text()

    assert "call.waiting to pager: delivered after 2 attempts" in text
