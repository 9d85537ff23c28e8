"""A display transform that drops a secret field hides it in every place a call's arguments are shown: the one-click
answer link's confirmation page, the mail (a real SMTP server), the Slack message, the signed webhook (verified with
the ``standardwebhooks`` package), the inbox and the run's detail over HTTP, the inbox and the run's page in
Chromium, and the journal the run's page is drawn from (a declined call's too)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
from playwright.async_api import expect
from standardwebhooks.webhooks import Webhook

from tempo_agents import Agent, AnswerLinks, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents._ports import free_port
from tempo_agents.notifications import EmailChannel, NotificationSettings, SlackChannel, WebhookChannel
from tempo_agents.server.serving import ApiServer
from tempo_agents.tools.transform import TransformContext
from tests.conftest import AppFactory, running_worker
from tests.support.browser import chromium, signed_in_page
from tests.support.notification_receivers import WebhookReceiver, settled_deliveries, smtp_server, webhook_receiver

UPLOAD_TOKEN = "upl-7c1e-never-shown"
ROTATE_TOKEN = "rot-42aa-never-shown"
HOOK_SECRET = "whsec_aGlkZGVuLWFyZ3VtZW50cy1zZWNyZXQ="


def without_token(ctx: TransformContext) -> Any:
    return {key: value for key, value in ctx.input.items() if key != "token"}


def secretive_agent() -> Agent:
    """Two calls made together, both waiting for approval: ``upload`` hides its token from every view of its
    arguments (``display.input``), ``rotate`` only from its approval (``display.approval``)."""
    upload = create_tool(
        id="upload",
        description="Uploads a file",
        execute=lambda data: "uploaded",
        require_approval=True,
        transform={"display": {"input": without_token}},
    )
    rotate = create_tool(
        id="rotate",
        description="Rotates a key",
        execute=lambda data: "rotated",
        require_approval=True,
        transform={"display": {"approval": without_token}},
    )
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall("upload", {"path": "report.pdf", "token": UPLOAD_TOKEN}, id="call-up"),
                    ScriptedToolCall("rotate", {"key": "billing", "token": ROTATE_TOKEN}, id="call-rot"),
                ]
            ),
            ScriptedResponse(text="Done."),
        ]
    )
    return Agent(id="keeper", model=model, tools={"upload": upload, "rotate": rotate})


def hidden(text: str) -> bool:
    return UPLOAD_TOKEN not in text and ROTATE_TOKEN not in text


async def test_a_field_a_display_transform_drops_is_shown_nowhere(make_app: AppFactory) -> None:
    port = free_port()
    links = AnswerLinks(["hidden-args-link-secret"], base_url=f"http://127.0.0.1:{port}")
    hook, chat = WebhookReceiver(), WebhookReceiver()
    with webhook_receiver(hook), webhook_receiver(chat), smtp_server() as (smtp_port, mails):
        settings = NotificationSettings(
            channels=[
                WebhookChannel(name="ops", url=hook.url, secrets=[HOOK_SECRET]),
                SlackChannel(name="chat", url=chat.url),
                EmailChannel(name="mail", host="127.0.0.1", port=smtp_port, sender="agents@x", to=["ops@x"]),
            ],
            first_retry=timedelta(milliseconds=100),
        )
        app = make_app([secretive_agent()], notifications=settings, answer_links=links)
        server = ApiServer(app, port=port)
        await server.start()
        try:
            async with running_worker(app), chromium() as browser, httpx.AsyncClient(timeout=60) as http:
                first = await app.agent("keeper").generate("upload the report and rotate the billing key")
                assert first.finish_reason == "suspended"
                run_id = first.run_id
                await settled_deliveries(app, run_id, 6)  # two waiting calls, three channels

                # the webhook: signed (the standardwebhooks package verifies it) and the token left out
                events = [Webhook(HOOK_SECRET).verify(body, headers) for _, headers, body in hook.deliveries]
                shown = {event["call"]["toolName"]: event["call"]["args"] for event in events}
                assert shown == {"upload": {"path": "report.pdf"}, "rotate": {"key": "billing"}}
                # Slack and mail
                assert len(chat.deliveries) == 2 and len(mails) == 2
                assert all(hidden(body.decode()) for _, _, body in chat.deliveries)
                assert any("report.pdf" in body.decode() for _, _, body in chat.deliveries)
                for _, mail in mails:
                    parts = [part.get_content() for part in mail.iter_parts()]
                    assert len(parts) == 2 and all(hidden(part) for part in parts)
                assert any("report.pdf" in part.get_content() for _, mail in mails for part in mail.iter_parts())
                # the answer links' confirmation pages
                pages = {}
                for event in events:
                    confirmation = await http.get(event["links"]["answers"]["decline"])
                    assert confirmation.status_code == 200, confirmation.text
                    pages[event["call"]["toolName"]] = confirmation.text
                assert hidden(pages["upload"] + pages["rotate"])
                assert "report.pdf" in pages["upload"] and "billing" in pages["rotate"]
                # the inbox and the run's detail over HTTP
                api = f"{server.url}/api"
                inbox = (await http.get(f"{api}/inbox")).json()
                assert {item["toolName"]: item["args"] for item in inbox["items"]} == shown
                detail = (await http.get(f"{api}/runs/{run_id}")).json()
                assert {call["toolName"]: call["args"] for call in detail["pending"]} == shown
                # the inbox and the run's page in Chromium
                _, page = await signed_in_page(browser, server, None)
                card = page.locator(f'article[data-run-id="{run_id}"]')
                await expect(card.get_by_text("report.pdf").first).to_be_visible(timeout=15_000)
                await expect(card.get_by_text("billing").first).to_be_visible()
                assert hidden(await page.locator("body").inner_text())
                await page.goto(f"{server.url}/#/runs/{run_id}")
                await expect(page.get_by_text("report.pdf").first).to_be_visible(timeout=15_000)
                assert UPLOAD_TOKEN not in await page.locator("body").inner_text()

                # a declined call's chunk shows its arguments as shown everywhere else
                upload_event = next(event for event in events if event["call"]["toolName"] == "upload")
                declined = await http.post(upload_event["links"]["answers"]["decline"])
                assert declined.status_code == 200, declined.text
                await app.approve_tool_call("keeper", run_id=run_id, tool_call_id="call-rot")
                assert (await app.attach(run_id, follow="run").result()).finish_reason == "stop"
                journal = [entry.chunk for entry in await app.store.read_chunks(run_id)]
        finally:
            await server.stop()

    # the journal, which the run's page draws: the upload's token nowhere; the rotate's approval without it
    # (``step-finish`` and ``finish`` carry the model's own record of its calls in ``output``, as the reference
    # stream does; the run's page does not draw them)
    drawn = [chunk for chunk in journal if chunk["type"] not in ("step-finish", "finish")]
    assert {chunk["type"] for chunk in drawn} >= {"tool-call", "tool-call-approval", "tool-output-denied"}
    assert UPLOAD_TOKEN not in json.dumps(drawn)
    approvals = {c["payload"]["toolName"]: c["payload"]["args"] for c in journal if c["type"] == "tool-call-approval"}
    assert approvals == shown
    [denied] = [chunk for chunk in journal if chunk["type"] == "tool-output-denied"]
    assert denied["payload"]["args"] == {"path": "report.pdf"}
