"""Who may do what: bearer tokens on every route, the principal recorded with each answer, CORS."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from tempo_agents import App
from tempo_agents.errors import ConfigurationError
from tempo_agents.journal.chunks import chunk_to_wire
from tempo_agents.server import create_server
from tempo_agents.server.auth import load_tokens_file
from tempo_agents.server.serving import ApiServer, ApiServerError, is_loopback
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent, served, sse_chunks

TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}


def _routes(api: Any) -> list[tuple[str, str]]:
    """Every (method, concrete path) the application answers, path parameters filled in: its own routes
    (``/openapi.json``, the docs) and every operation of its OpenAPI document (the included routers)."""
    found: set[tuple[str, str]] = set()
    for route in api.routes:
        if isinstance(route, Route):
            found.update((method, route.path) for method in route.methods or () if method != "HEAD")
    for path, operations in api.openapi()["paths"].items():
        found.update((method.upper(), re.sub(r"\{[^}]+\}", "x", path)) for method in operations)
    return sorted(found)


async def test_every_route_but_health_and_readiness_needs_a_known_token(tmp_path: Path) -> None:
    app = App(agents=[parity_agent()], store=f"sqlite:///{tmp_path / 'store.db'}")
    api = create_server(app, tokens=TOKENS)
    routes = _routes(api)
    assert ("POST", "/api/agents/x/stream") in routes and ("GET", "/openapi.json") in routes
    assert len(routes) > 25
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://test") as http:
        for method, path in routes:
            if path in ("/api/health", "/api/ready"):  # the probes of deploy/
                continue
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic dG9rLWFsaWNl"}):
                answer = await http.request(method, path, headers=headers, json={})
                assert answer.status_code == 401, (method, path, headers, answer.text)
                assert set(answer.json()) == {"error"} and answer.headers["www-authenticate"] == "Bearer"
        health = await http.get("/api/health")
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        ready = await http.get("/api/ready")
        assert (ready.status_code, ready.json()) == (200, {"status": "ready", "store": "ok"})
        # A known token goes through (no Temporal is needed to list agents and tools).
        for token in TOKENS:
            agents = await http.get("/api/agents", headers={"Authorization": f"Bearer {token}"})
            assert agents.status_code == 200 and "assistant" in agents.json()
        spec = await http.get("/openapi.json", headers={"Authorization": "Bearer tok-bob"})
        assert spec.status_code == 200 and "/api/health" in spec.json()["paths"]


async def test_without_tokens_every_route_is_open(tmp_path: Path) -> None:
    app = App(agents=[parity_agent()], store=f"sqlite:///{tmp_path / 'store.db'}")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_server(app)), base_url="http://test") as http:
        assert (await http.get("/api/agents")).status_code == 200


async def test_cors_origins(tmp_path: Path) -> None:
    app = App(agents=[parity_agent()], store=f"sqlite:///{tmp_path / 'store.db'}")
    api = create_server(app, tokens=TOKENS, cors_origins=["http://ui.example"])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://test") as http:
        preflight = await http.options(
            "/api/agents",
            headers={
                "Origin": "http://ui.example",
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "authorization",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "http://ui.example"
        refused = await http.get("/api/agents", headers={"Origin": "http://ui.example"})
        assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == "http://ui.example"
        other = await http.options(
            "/api/agents", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "GET"}
        )
        assert other.status_code == 400 and "access-control-allow-origin" not in other.headers


async def test_the_principal_is_recorded_with_each_answer(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    alice = {"Authorization": "Bearer tok-alice"}
    bob = {"Authorization": "Bearer tok-bob"}
    async with served(app, tokens=TOKENS) as http, running_worker(app):
        # bob resumes a suspended call through the operations route
        charge = (await http.post("/agents/assistant/generate", json={"messages": "charge"}, headers=alice)).json()
        run_id = charge["runId"]
        accepted = await http.post(f"/runs/{run_id}/resume", json={"resumeData": {"confirmed": True}}, headers=bob)
        assert accepted.status_code == 200, accepted.text
        follow = await http.get(f"/runs/{run_id}/stream", params={"offset": accepted.json()["offset"]}, headers=bob)
        chunks = [c for c in _run_stream_chunks(follow.content) if c["type"] == "tool-result"]
        assert chunks[0]["payload"]["answeredBy"] == "bob" and chunks[0]["payload"]["result"] == {"charged": 990}
        detail = (await http.get(f"/runs/{run_id}", headers=alice)).json()
        [answer] = detail["answers"]
        assert (answer["toolCallId"], answer["action"], answer["answeredBy"]) == ("call-c1", "resume", "bob")
        assert answer["answeredAt"]

        # alice approves through the reference's route (SSE continuation)
        delete = (await http.post("/agents/assistant/generate", json={"messages": "delete"}, headers=bob)).json()
        approved = await http.post(
            "/agents/assistant/approve-tool-call",
            json={"runId": delete["runId"], "toolCallId": "call-d1"},
            headers=alice,
        )
        assert approved.status_code == 200, approved.text
        [result] = [c for c in sse_chunks(approved.content) if c["type"] == "tool-result"]
        assert result["payload"]["answeredBy"] == "alice"
        stored = await app.store.read_chunks(delete["runId"])
        answered = [e.chunk for e in stored if e.chunk.get("type") == "tool-result"]
        assert [c["payload"]["answeredBy"] for c in answered] == ["alice"]
        [answer] = (await http.get(f"/runs/{delete['runId']}", headers=bob)).json()["answers"]
        assert (answer["action"], answer["answeredBy"]) == ("approve", "alice")

        # bob declines: the denial and the result the model sees both name him
        declined_run = (await http.post("/agents/assistant/generate", json={"messages": "delete"}, headers=bob)).json()
        declined = await http.post(f"/runs/{declined_run['runId']}/decline", json={"reason": "no"}, headers=bob)
        assert declined.status_code == 200, declined.text
        follow = await http.get(
            f"/runs/{declined_run['runId']}/stream", params={"offset": declined.json()["offset"]}, headers=bob
        )
        by_type = {c["type"]: c for c in _run_stream_chunks(follow.content)}
        assert by_type["tool-output-denied"]["payload"]["answeredBy"] == "bob"
        assert by_type["tool-result"]["payload"]["answeredBy"] == "bob"


async def test_answers_without_a_principal_carry_no_answered_by(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        charge = (await http.post("/agents/assistant/generate", json={"messages": "charge"})).json()
        done = await http.post(
            "/agents/assistant/resume-stream", json={"runId": charge["runId"], "resumeData": {"confirmed": False}}
        )
        [result] = [c for c in sse_chunks(done.content) if c["type"] == "tool-result"]
        assert "answeredBy" not in result["payload"]
        [answer] = (await http.get(f"/runs/{charge['runId']}")).json()["answers"]
        assert "answeredBy" not in answer and answer["action"] == "resume"


async def test_the_app_records_answered_by(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with running_worker(app):
        first = await app.generate("assistant", "charge")
        resumed = await app.resume_stream(
            "assistant", {"confirmed": True}, run_id=first.run_id, answered_by="carol@example.com"
        )
        results = [chunk_to_wire(c) for c in [chunk async for chunk in resumed.full_stream] if c.type == "tool-result"]
        assert results[0]["payload"]["answeredBy"] == "carol@example.com"


def _run_stream_chunks(body: bytes) -> list[dict[str, Any]]:
    import json

    chunks = []
    for block in body.decode().split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data: ") and line != "data: [DONE]":
                chunks.append(json.loads(line[6:]))
    return chunks


def test_tokens_files(tmp_path: Path) -> None:
    json_file = tmp_path / "tokens.json"
    json_file.write_text('{"t1": "alice", "t2": "bob"}')
    assert load_tokens_file(json_file) == {"t1": "alice", "t2": "bob"}
    lines = tmp_path / "tokens.txt"
    lines.write_text("# token name\nt1 alice\n\nt2   bob\n")
    assert load_tokens_file(lines) == {"t1": "alice", "t2": "bob"}
    bad = tmp_path / "bad.txt"
    bad.write_text("only-a-token\n")
    with pytest.raises(ConfigurationError, match=r"bad\.txt:1: expected 'token name'"):
        load_tokens_file(bad)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(ConfigurationError, match="holds no tokens"):
        load_tokens_file(empty)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("::1", True), ("127.0.0.2", True), ("0.0.0.0", False),
     ("10.1.2.3", False), ("example.com", False), ("::", False)],
)  # fmt: skip
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_an_open_server_listens_on_loopback_only(tmp_path: Path) -> None:
    app = App(agents=[parity_agent()], store=f"sqlite:///{tmp_path / 'store.db'}")
    with pytest.raises(ApiServerError, match=r"refusing to serve the HTTP API on 0\.0\.0\.0"):
        ApiServer(app, host="0.0.0.0", port=0)
    ApiServer(app, host="0.0.0.0", port=0, tokens=TOKENS)  # a token, or a hook of one's own, allows it
    ApiServer(app, host="0.0.0.0", port=0, authorize=lambda request: None)
