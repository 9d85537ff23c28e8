"""The dashboard's sign-in through the provider, spoken as a browser speaks it (cookies, redirects): the login, the
callback, the session cookie and what it lets through, its renewal with the refresh token, and signing out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tempo_agents import App
from tempo_agents.identity import OidcSettings
from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory
from tests.support.http_api import parity_agent
from tests.support.oidc_provider import CLIENT_ID, MockProvider, running_provider

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def provider() -> Iterator[MockProvider]:
    with running_provider(access_token_max_age=timedelta(seconds=3)) as running:
        running.set_user("alice", {"email": "alice@example.com", "roles": ["acme:operator"]})
        yield running


@asynccontextmanager
async def _dashboard(app: App, provider: MockProvider) -> AsyncIterator[httpx.AsyncClient]:
    settings = OidcSettings(
        issuer=provider.issuer,
        audience="tempo-api",
        client_id=CLIENT_ID,
        client_secret="dashboard-secret",
        leeway_seconds=0,
        session_secret="s3cret",
    )
    server = ApiServer(app, port=0, oidc=settings)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as browser:
            yield browser
    finally:
        await server.stop()


async def _sign_in(browser: httpx.AsyncClient, provider: MockProvider, sub: str) -> httpx.Response:
    """Through the provider's form as a person would: the login, the provider's page, the callback."""
    login = await browser.get("/auth/login", params={"next": "/#/runs"})
    assert login.status_code == 303
    target = login.headers["location"]
    query = parse_qs(urlsplit(target).query)
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"][0] and query["state"][0]
    async with httpx.AsyncClient() as at_provider:
        chosen = await at_provider.post(target, data={"sub": sub})
    assert chosen.status_code == 302, chosen.text
    callback = await browser.get(chosen.headers["location"])
    return callback


async def test_sign_in_sets_a_sealed_session_that_names_the_principal(
    make_app: AppFactory, provider: MockProvider
) -> None:
    app = make_app([parity_agent()])
    async with _dashboard(app, provider) as browser:
        assert (await browser.get("/api/identity")).status_code == 401
        assert (await browser.get("/auth/session")).json()["signedIn"] is False
        callback = await _sign_in(browser, provider, "alice")
        assert callback.status_code == 303 and callback.headers["location"] == "/#/runs"
        cookie = callback.headers["set-cookie"]
        assert "tempo_agents_session=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie
        assert "Secure" not in cookie  # plain http here; over https the cookie is Secure
        assert "alice" not in cookie  # sealed, not readable
        me = await browser.get("/api/identity")
        assert me.json() == {"name": "alice", "groups": [], "roles": {"acme": ["operator"]}}
        assert (await browser.get("/auth/session")).json()["name"] == "alice"
        sealed = browser.cookies["tempo_agents_session"]
        async with httpx.AsyncClient(base_url=browser.base_url) as other:  # a cookie changed in the browser: no session
            tampered = {"Cookie": f"tempo_agents_session={sealed[:-4]}AAAA"}
            assert (await other.get("/api/identity", headers=tampered)).status_code == 401
            assert (await other.get("/api/identity", headers={"Cookie": f"tempo_agents_session={sealed}"})).is_success
        signed_out = await browser.post("/auth/logout")
        assert signed_out.status_code == 200 and signed_out.json()["redirect"].startswith(provider.issuer)
        assert (await browser.get("/api/identity")).status_code == 401


async def test_an_ended_session_is_renewed_with_the_refresh_token(make_app: AppFactory, provider: MockProvider) -> None:
    app = make_app([parity_agent()])
    async with _dashboard(app, provider) as browser:
        await _sign_in(browser, provider, "alice")
        assert (await browser.get("/api/identity")).status_code == 200
        await asyncio.sleep(3.5)  # the provider's tokens last 3 seconds
        ended = await browser.get("/api/identity")
        assert ended.status_code == 401
        assert (await browser.get("/auth/session")).json() | {"expiresAt": None} == {
            "signIn": True,
            "signedIn": False,
            "name": None,
            "canRefresh": True,
            "expiresAt": None,
        }
        renewed = await browser.post("/auth/refresh")
        assert renewed.status_code == 200, renewed.text
        assert (await browser.get("/api/identity")).json()["name"] == "alice"
        # The provider forgets the person's tokens: the next renewal is refused and the session cleared.
        httpx.post(f"{provider.issuer}/users/alice/revoke-tokens").raise_for_status()
        await asyncio.sleep(3.5)
        refused = await browser.post("/auth/refresh")
        assert refused.status_code == 401 and "sign" in refused.json()["error"].lower()
        assert "tempo_agents_session" not in browser.cookies


async def test_a_callback_not_started_here_is_refused(make_app: AppFactory, provider: MockProvider) -> None:
    app = make_app([parity_agent()])
    async with _dashboard(app, provider) as browser:
        forged = await browser.get("/auth/callback", params={"code": "abc", "state": "guessed"})
        assert forged.status_code == 401 and "not started here" in forged.json()["error"]
        assert "tempo_agents_session" not in browser.cookies
        login = await browser.get("/auth/login", params={"next": "https://evil.example/"})
        assert login.status_code == 303
        async with httpx.AsyncClient() as at_provider:
            chosen = await at_provider.post(login.headers["location"], data={"sub": "alice"})
        back = await browser.get(chosen.headers["location"])
        assert back.headers["location"] == "/"  # never sent to another site after signing in
