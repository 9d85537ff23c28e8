"""``tempo-agents dev --app examples/operations_dashboard.py:app`` serves the dashboard at ``/``: a person signs in
with the server's token, answers a question with one click, and follows the run to its end."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
from playwright.async_api import expect

from tests.support.browser import EXAMPLE, chromium
from tests.support.cli_processes import CLI, read_dev_banner

TOKEN = "ops-secret"


async def test_dev_serves_the_dashboard_behind_its_token(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *CLI, "dev", "--port", "0", "--ui-port", "0", "--api-port", "0", "--auth-token", TOKEN,
        "--app", f"{EXAMPLE}:app", cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        banner = await read_dev_banner(process, timeout=90)
        dashboard, ui = banner.get("Dashboard", ""), banner.get("Temporal UI", "")
        assert dashboard.startswith("http://127.0.0.1:") and ui.startswith("http://")
        async with httpx.AsyncClient(base_url=dashboard, timeout=60) as http:
            page_html = await http.get("/")
            assert page_html.status_code == 200 and "<title>tempo-agents" in page_html.text  # no token needed
            assert (await http.get("/api/inbox")).status_code == 401  # the data is behind the token
            started = await http.post(
                "/api/agents/desk/generate", json={"messages": "choose"}, headers={"Authorization": f"Bearer {TOKEN}"}
            )
            run_id = started.json()["runId"]

        async with chromium() as browser:
            page = await browser.new_page()
            await page.goto(dashboard)
            await page.get_by_label("API token").fill("wrong")
            await page.get_by_role("button", name="Sign in").click()
            await expect(page.get_by_text("Invalid or expired token")).to_be_visible()
            await page.get_by_label("API token").fill(TOKEN)
            await page.get_by_role("button", name="Sign in").click()
            await expect(page.get_by_text("Signed in as api")).to_be_visible()
            card = page.locator(f'article[data-run-id="{run_id}"]')
            await expect(card.get_by_text("Which room?")).to_be_visible(timeout=10_000)
            await card.get_by_role("button", name="Double").focus()
            await page.keyboard.press("Enter")  # keyboard usable
            await expect(card).to_be_hidden(timeout=5_000)
            await page.goto(f"{dashboard}#/runs/{run_id}")
            conversation = page.locator(".conversation")
            await expect(conversation).to_contain_text("I will go ahead with Double", timeout=15_000)
            await expect(conversation).to_contain_text("answered by api")
            link = page.get_by_role("link", name="Open in Temporal UI")
            assert (await link.get_attribute("href")) == f"{ui}/namespaces/default/workflows/{run_id}"
        process.send_signal(signal.SIGTERM)
        stdout, stderr = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            stdout, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, stderr.decode()
    assert stdout.decode().strip().endswith("stopped")
