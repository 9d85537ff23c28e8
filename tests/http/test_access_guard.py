"""The guard's edges: who a request is without sign-in, a route without a rule, role names checked at start, and the
dashboard's live feed, which carries only the caller's tenants' answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from fastapi import APIRouter, Depends

from tempo_agents import App
from tempo_agents.errors import ConfigurationError
from tempo_agents.server import create_server
from tempo_agents.server.access import access_dependency
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent, served
from tests.support.tenants import TENANT_ROLES, TENANT_TOKENS, tenant_world

ROOT = {"Authorization": "Bearer tok-root"}


def _app(tmp_path: Path) -> App:
    return App(agents=[parity_agent()], store=f"sqlite:///{tmp_path / 'store.db'}")


async def test_without_roles_a_token_is_an_admin_and_a_principal_missing_from_roles_holds_none(
    tmp_path: Path,
) -> None:
    tokens = {"tok-alice": "alice", "tok-mallory": "mallory"}
    for roles, mallory_status in ((None, 200), ({"alice": {"*": ["admin"]}}, 403)):
        api = create_server(_app(tmp_path), tokens=tokens, roles=roles)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://test") as http:
            alice = await http.get("/api/agents", headers={"Authorization": "Bearer tok-alice"})
            assert alice.status_code == 200
            mallory = await http.get("/api/agents", headers={"Authorization": "Bearer tok-mallory"})
            assert mallory.status_code == mallory_status, mallory.text
            executed = await http.post(
                "/api/tools/weather-tool/execute",
                json={"data": {"city": "Oslo"}},
                headers={"Authorization": "Bearer tok-mallory"},
            )
            assert executed.status_code == mallory_status, executed.text
    api = create_server(_app(tmp_path))  # no tokens: everyone is an administrator (development)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://test") as http:
        executed = await http.post("/api/tools/weather-tool/execute", json={"data": {"city": "Oslo"}})
        assert executed.status_code == 200, executed.text


async def test_a_viewer_may_read_but_not_run_tools_or_read_metrics(tmp_path: Path) -> None:
    api = create_server(_app(tmp_path), tokens={"tok-v": "vera"}, roles={"vera": {"acme": ["viewer"]}})
    headers = {"Authorization": "Bearer tok-v"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://test") as http:
        assert (await http.get("/api/tools", headers=headers)).status_code == 200
        refused = await http.post("/api/tools/weather-tool/execute", json={"data": {"city": "Oslo"}}, headers=headers)
        assert refused.status_code == 403
        assert refused.json() == {"error": "vera may not tools.execute: it needs the admin role"}
        assert (await http.get("/metrics", headers=headers)).status_code == 403


async def test_a_route_without_a_rule_is_refused(tmp_path: Path) -> None:
    api = create_server(_app(tmp_path))
    added = APIRouter()

    @added.get("/unlisted")
    async def unlisted() -> dict[str, str]:
        return {"reached": "yes"}

    api.include_router(added, prefix="/api", dependencies=[Depends(access_dependency(None, None))])  # not in the table
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://test") as http:
        answer = await http.get("/api/unlisted")
        assert answer.status_code == 403
        assert answer.json()["error"].endswith("/unlisted has no access rule: refused")


def test_an_unknown_role_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="alice holds an unknown role in acme: owner"):
        create_server(_app(tmp_path), tokens={"t": "alice"}, roles={"alice": {"acme": ["owner"]}})


async def test_the_live_feed_carries_only_the_callers_tenants_answers(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app, tokens=TENANT_TOKENS, roles=TENANT_ROLES) as http, running_worker(app):
        things = await tenant_world(http)
        mine, theirs = things.things["acme"].run_id, things.things["globex"].run_id
        heard: list[dict[str, object]] = []

        async def listen() -> None:
            headers = {"Authorization": "Bearer tok-viewer"}
            async with http.stream("GET", "/dashboard/events", headers=headers) as events:
                async for line in events.aiter_lines():
                    if line.startswith("data: "):
                        heard.append(json.loads(line[6:]))
                        if heard[-1].get("type") == "answered" and heard[-1].get("runId") == mine:
                            return

        listening = asyncio.create_task(listen())
        while not heard:  # the "hello": the viewer listens
            await asyncio.sleep(0.05)
        for run_id in (theirs, mine):
            answer = {"runId": run_id, "toolCallId": "call-c1", "action": "resume", "resumeData": {"confirmed": False}}
            assert (await http.post("/inbox/answer", json=answer, headers=ROOT)).status_code == 200
        await asyncio.wait_for(listening, 30)
        answered = [event["runId"] for event in heard if event.get("type") == "answered"]
        assert answered == [mine]
