"""The dashboard's audit page in a real headless Chromium against a real server, worker and Temporal: it lists the
actions taken over HTTP (who, tenant, action, target, outcome), narrows them by action, principal and tenant, and
has no axe violation in light or dark."""

from __future__ import annotations

import httpx
from playwright.async_api import expect

from tests.conftest import AppFactory, running_worker
from tests.support.accessibility import axe_violations
from tests.support.browser import TOKENS, chromium, dashboard_server, desk_agent, signed_in_page


async def test_the_audit_page_lists_and_filters_actions_without_axe_violations(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    alice_token, bob_token = "tok-alice", "tok-bob"
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        async with httpx.AsyncClient(base_url=server.url + "/api", timeout=60) as http:
            as_alice = {"authorization": f"Bearer {alice_token}"}
            as_bob = {"authorization": f"Bearer {bob_token}"}
            started = await http.post(
                "/agents/desk/generate",
                json={"messages": "delete reports/a.csv", "memory": {"thread": "reports", "resource": "acme"}},
                headers=as_alice,
            )
            run_id = started.json()["runId"]
            await http.post(f"/runs/{run_id}/cancel", headers=as_bob)
            await http.post("/runs/no-such-run/cancel", headers=as_bob)
        _, page = await signed_in_page(browser, server, alice_token, path="/#/audit")
        rows = page.locator(".audit-table tbody tr")
        # the page asked twice without a token (its session, and the sign-in session it would renew): refused sign-ins
        await expect(rows).to_have_count(5)
        for refused in (rows.nth(0), rows.nth(1)):
            await expect(refused.locator(".action")).to_have_text("sign-in")
            await expect(refused.locator(".outcome")).to_have_text("refused 401")
        await expect(rows.nth(2).locator(".outcome")).to_have_text("refused 404")
        await expect(rows.nth(4).locator(".action")).to_have_text("start")
        await expect(rows.nth(4).locator(".tenant")).to_have_text("acme")

        await page.get_by_label("Action").fill("cancel")
        await page.get_by_role("button", name="Filter").click()
        await expect(rows).to_have_count(2)
        await page.get_by_label("Tenant").fill("acme")
        await page.get_by_role("button", name="Filter").click()
        await expect(rows).to_have_count(1)
        await expect(rows.first.locator(".principal")).to_have_text(TOKENS[bob_token])
        await expect(rows.first.locator(".target")).to_have_text(run_id)
        await page.get_by_label("Principal").fill(TOKENS[alice_token])
        await page.get_by_role("button", name="Filter").click()
        await expect(rows).to_have_count(0)
        await expect(page.locator(".audit-view [role=status]")).to_have_text("No actions recorded.")
        await page.get_by_label("Principal").fill("")
        await page.get_by_label("Tenant").fill("")
        await page.get_by_label("Action").fill("")
        await page.get_by_role("button", name="Filter").click()
        await expect(rows).to_have_count(5)

        found: dict[str, list[str]] = {}
        for scheme in ("light", "dark"):
            await page.emulate_media(color_scheme=scheme)
            violations = await axe_violations(page)
            if violations:
                found[scheme] = violations
        assert not found, "\n".join(f"{scheme}:\n  " + "\n  ".join(lines) for scheme, lines in found.items())
