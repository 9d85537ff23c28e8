"""The inbox in a real Chromium: a call waiting for the signed-in approver says so, the approver edits the arguments
as JSON, sees the diff against what the model asked for, and approves; a schema-invalid edit is refused in place;
the run's page shows who changed what."""

from __future__ import annotations

from typing import Any

from playwright.async_api import expect

from tests.conftest import AppFactory, running_worker
from tests.support.approval_agents import payments_agent
from tests.support.browser import TOKENS, chromium, dashboard_server, signed_in_page


async def test_an_approver_edits_sees_the_diff_and_the_tool_runs_with_the_edit(make_app: AppFactory) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, tool_approvers=["alice"])
    app = make_app([agent])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        first = await agent.generate("pay")
        _, page = await signed_in_page(browser, server, "tok-alice")
        card = page.locator(f'article[data-run-id="{first.run_id}"]')
        await expect(card.get_by_text("Waiting for you")).to_be_visible(timeout=10_000)
        await expect(card.get_by_text("May be answered by alice")).to_be_visible()
        await card.get_by_text("Edit arguments").click()
        editor = card.get_by_label("Arguments to approve (JSON)")
        await editor.fill('{"amount": 0, "to": "acme"}')
        await card.get_by_role("button", name="Approve").click()
        await expect(card.locator(".form-error")).to_contain_text("amount", timeout=10_000)
        assert [call.tool_call_id for call in await app.pending(first.run_id)] == ["call-1"]

        await editor.fill('{"amount": 450, "to": "acme-escrow"}')
        diff = card.get_by_label("Changes to the arguments")
        await expect(diff.locator("li")).to_have_count(2)
        await expect(diff.locator("li.changed").first).to_have_text("amount: 900 → 450")
        await expect(diff.locator("li.changed").nth(1)).to_have_text('to: "acme" → "acme-escrow"')
        await card.get_by_role("button", name="Approve").click()
        await expect(card.get_by_text("Answered as alice")).to_be_visible(timeout=10_000)
        await app.attach(first.run_id, follow="run").result()
        answers = await app.queries(first.run_id).answers()
        await page.goto(f"{server.url}/#/runs/{first.run_id}")  # the run's history: who changed what
        changed = page.locator(".conversation .args-changed")
        await expect(changed).to_contain_text("arguments changed by alice before approval", timeout=15_000)
        await expect(changed.locator("li.changed").first).to_have_text("amount: 900 → 450")
    assert ran == [{"amount": 450, "to": "acme-escrow"}]
    assert [(a.answered_by, a.args) for a in answers] == [("alice", {"amount": 450, "to": "acme-escrow"})]
