"""Signing in to the dashboard through the organisation's identity provider, in a real headless Chromium: a real
OpenID Connect provider on 127.0.0.1, the authorization code flow with PKCE, the name shown, and signing out."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tempo_agents.identity import OidcSettings
from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory
from tests.support.browser import chromium, desk_agent
from tests.support.oidc_provider import CLIENT_ID, running_provider

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_a_person_signs_in_through_the_provider_sees_their_name_and_signs_out(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    with running_provider() as provider:
        provider.set_user("alice@example.com", {"email": "alice@example.com", "roles": ["*:approver"]})
        settings = OidcSettings(
            issuer=provider.issuer, audience="tempo-api", client_id=CLIENT_ID, client_secret="dashboard-secret"
        )
        server = ApiServer(app, port=0, oidc=settings)
        await server.start()
        try:
            async with chromium() as browser:
                context = await browser.new_context(viewport={"width": 1280, "height": 860})
                page = await context.new_page()
                await page.goto(server.url + "/#/runs")
                # Not signed in: the dashboard sends the person to the provider's sign-in page.
                await expect(page.get_by_role("heading", name="Authorize Client")).to_be_visible(timeout=15_000)
                assert page.url.startswith(provider.issuer + "/oauth2/authorize")
                assert "code_challenge_method=S256" in page.url
                await page.locator("input[name=sub]").fill("alice@example.com")
                await page.get_by_role("button", name="Authorize").click()
                # Back on the page asked for, signed in.
                await expect(page.get_by_text("Signed in as alice@example.com")).to_be_visible(timeout=15_000)
                assert page.url == server.url + "/#/runs"
                cookies = {cookie["name"]: cookie for cookie in await context.cookies(server.url)}
                session = cookies["tempo_agents_session"]
                assert session["httpOnly"] and session["sameSite"] == "Lax"
                assert "alice" not in session["value"]
                assert await page.evaluate("document.cookie") == ""  # no script reads the session
                # Sign out: the session ends here, then at the provider.
                await page.get_by_role("button", name="Sign out").click()
                await expect(page.get_by_role("heading", name="End Session")).to_be_visible(timeout=15_000)
                assert "tempo_agents_session" not in {c["name"] for c in await context.cookies(server.url)}
                await page.get_by_role("button", name="End session").click()
                # Back at the dashboard, which asks to sign in again.
                await expect(page.get_by_role("heading", name="Authorize Client")).to_be_visible(timeout=15_000)
                await context.close()
        finally:
            await server.stop()
