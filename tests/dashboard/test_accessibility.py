"""axe-core on every page of the dashboard, in light and dark, in a real headless Chromium against a real server,
worker and Temporal: no violation at all (none serious or critical, nor moderate or minor) on the inbox (questions,
choices, a form from a resume schema, two approvals of one tool, an argument long enough to scroll, a question
asked inside a sub-agent), the answered view, the runs table, a run waiting for approval with its notification
deliveries, a run with a sub-agent nested under its call, the child's own page, a finished run with its model steps
open, a thread, the schedules and a comparison of two runs."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.async_api import Page, expect

from tempo_agents import App
from tempo_agents.agent.delegation import child_run_id
from tempo_agents.notifications import NotificationSettings, WebhookChannel
from tests.conftest import AppFactory, running_worker
from tests.support.accessibility import axe_violations
from tests.support.browser import chromium, dashboard_server, desk_agent, signed_in_page
from tests.support.notification_receivers import WebhookReceiver, settled_deliveries, webhook_receiver

LONG_PATH = "reports/" + "x" * 3_000
"""An argument long enough that its block scrolls."""


async def settled(app: App, message: str, **options: Any) -> str:
    """Start a run of ``desk`` and return its id once its first segment ended (it waits, or it finished)."""
    stream = await app.agent("desk").stream(message, **options)
    await stream.result()
    return stream.run_id


async def open_every_disclosure(page: Page) -> None:
    """Open every closed part of the page (the model steps, each step's input, folded groups), so axe reads them."""
    await page.evaluate("document.querySelectorAll('details:not([open])').forEach((d) => { d.open = true; })")


async def test_no_page_has_an_axe_violation_in_light_or_dark(make_app: AppFactory) -> None:
    receiver = WebhookReceiver()
    with webhook_receiver(receiver):
        notifications = NotificationSettings(channels=[WebhookChannel(name="pager", url=receiver.url)])
        app = make_app([desk_agent()], notifications=notifications)
        async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
            for message in ("question", "choose", "extras", "ship", "delete reports/b.csv", f"delete {LONG_PATH}"):
                await settled(app, message)
            waiting = await settled(app, "delete reports/a.csv")
            parent = await settled(app, "research tides and ask")
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                call = (await http.get(f"/api/runs/{parent}")).json()["pending"][0]["toolCallId"]
            child = child_run_id(parent, call)
            answered = await settled(app, "delete reports/done.csv", memory={"thread": "reports", "resource": "acme"})
            await app.approve_tool_call("desk", run_id=answered, answered_by="alice")
            await app.attach(answered, follow="run").result()
            other = await settled(app, "hello")
            await settled_deliveries(app, waiting, 1)
            schedule = await app.schedule("desk", "hello", every="1h", schedule_id=f"hourly-{app.task_queue[-8:]}")
            try:
                views: dict[str, tuple[str, str]] = {
                    "inbox": ("/#/inbox", "article.item >> nth=7"),
                    "answered": ("/#/answered", ".answers-table tbody tr"),
                    "runs": ("/#/runs", "tbody tr >> nth=8"),
                    "run waiting for approval": (f"/#/runs/{waiting}", ".notifications .delivery.delivered"),
                    "run with a sub-agent": (f"/#/runs/{parent}", ".child-run .conversation.nested .tool-call"),
                    "child run": (f"/#/runs/{child}", ".parent-link"),
                    "finished run": (f"/#/runs/{answered}", ".timeline .bar.tool"),
                    "thread": ("/#/threads/reports?resourceId=acme", ".thread-runs li a"),
                    "schedules": ("/#/schedules", "article.schedule"),
                    "compare": (f"/#/compare/{answered}/{other}", ".compare-table tbody tr"),
                }
                _, page = await signed_in_page(browser, server, None)
                found: dict[str, list[str]] = {}
                for scheme in ("light", "dark"):
                    await page.emulate_media(color_scheme=scheme)
                    for name, (path, ready) in views.items():
                        await page.goto(f"{server.url}{path}")
                        await page.locator(ready).first.wait_for(state="attached", timeout=20_000)
                        await open_every_disclosure(page)
                        if name == "inbox":
                            await expect(page.locator("#inbox-count")).to_have_text("8")
                        violations = await axe_violations(page)
                        if violations:
                            found[f"{name} ({scheme})"] = violations
                assert not found, "\n".join(f"{view}:\n  " + "\n  ".join(lines) for view, lines in found.items())
            finally:
                await schedule.delete()
