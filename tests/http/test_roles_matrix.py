"""The roles matrix of docs/roles.md, held against a running server: every route of the OpenAPI document, every
role, the caller's own tenant and another one."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tempo_agents import App
from tempo_agents.server import create_server
from tempo_agents.server.access import ROUTE_RULES
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent, served
from tests.support.tenants import ROLE_NAMES, TENANT_ROLES, TENANT_TOKENS, TenantWorld, tenant_world

MATRIX = Path(__file__).parents[2] / "docs" / "roles.md"
ROLES = ("viewer", "approver", "operator", "admin")


@dataclass(frozen=True)
class Row:
    method: str
    path: str
    action: str
    own: dict[str, str]
    other: str


def matrix() -> list[Row]:
    """The table of docs/roles.md, row by row."""
    rows = []
    for line in MATRIX.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 8 or cells[0] not in ("GET", "POST", "PATCH", "DELETE"):
            continue
        method, path, action, *own, other = cells
        rows.append(Row(method, path.strip("`"), action, dict(zip(ROLES, own, strict=True)), other))
    return rows


def test_the_matrix_names_every_route_of_the_openapi_document_and_agrees_with_the_rules(tmp_path: Path) -> None:
    api = create_server(App(agents=[parity_agent()], store=f"sqlite:///{tmp_path / 's.db'}"))
    documented = {
        (method.upper(), path.removeprefix("/api")) for path, ops in api.openapi()["paths"].items() for method in ops
    }
    rows = {(row.method, row.path): row for row in matrix()}
    assert documented - set(rows) == set(), "routes missing from docs/roles.md"
    assert {("GET", "/metrics"), ("POST", "/codec/encode"), ("POST", "/codec/decode")} <= set(rows)  # not in it
    assert documented - set(ROUTE_RULES) == set(), "routes missing from the rules"
    assert set(rows) == set(ROUTE_RULES)
    for key, row in rows.items():
        rule = ROUTE_RULES[key]
        assert row.action == rule.action, key
        if rule.role is not None:
            assert row.own == {role: "yes" if ROLE_NAMES[role].grants(rule.role) else "no" for role in ROLES}, key


def _concrete(path: str, world: TenantWorld, tenant: str) -> tuple[str, dict[str, str]]:
    """The path with its parameters filled in for ``tenant``'s things, and the query a route needs."""
    things = world.things[tenant]
    filled = (
        path.replace("{run_id}", things.run_id)
        .replace("{schedule_id}", things.schedule_id)
        .replace("{thread_id}", things.thread_id)
        .replace("{agent_id}", "assistant")
        .replace("{tool_id}", "weather-tool")
        .replace("{source}", "nowhere")
    )
    query: dict[str, str] = {}
    if path.startswith("/threads/"):
        query["resourceId"] = tenant
    if path == "/runs/compare":
        query = {"a": world.things["acme"].run_id, "b": things.run_id}
    return filled, query


def _body(row: Row, world: TenantWorld, tenant: str) -> dict[str, Any]:
    """A body that gets past the guard (it names the tenant's run or tenant) but no further, where it can: the
    route then refuses it itself (a 400), so the matrix changes nothing it need not."""
    run_id = world.things[tenant].run_id
    if row.path in ("/agents/{agent_id}/stream", "/agents/{agent_id}/generate"):
        return {"memory": {"thread": f"new-{tenant}", "resource": tenant}}  # no messages: a 400 after the guard
    if row.path == "/schedules" and row.method == "POST":
        return {"resource": tenant, "thread": f"s-{tenant}"}  # no agent nor message: a 400 after the guard
    if row.path == "/inbox/answer":
        return {"runId": run_id, "action": "nonsense"}
    if row.path.startswith("/agents/{agent_id}/") and row.method == "POST":
        return {"runId": run_id, "offset": "x"}
    if row.path == "/runs/{run_id}/fork":
        return {"atStep": "not a step"}
    if row.path in ("/runs/{run_id}/steer", "/runs/{run_id}/budget"):
        return {"unknown": True}
    if row.method in ("POST", "PATCH"):
        return {"unknownField": 1}
    return {}


async def _ask(
    http: httpx.AsyncClient, method: str, path: str, *, token: str, query: dict[str, str], body: Any
) -> tuple[int, str]:
    """The status and (unless it is a stream that answered 200) the body of one request."""
    url = path if path == "/metrics" or path.startswith("/codec/") else "/api" + path
    headers = {"Authorization": f"Bearer {token}"}
    kwargs: dict[str, Any] = {"params": query, "headers": headers}
    if method in ("POST", "PATCH"):
        kwargs["json"] = body
    async with http.stream(method, url, **kwargs) as answer:
        if answer.status_code == 200 and answer.headers.get("content-type", "").startswith("text/event-stream"):
            return 200, ""
        return answer.status_code, (await answer.aread()).decode()


def _missing(path: str, world: TenantWorld) -> tuple[str, str]:
    """The run or schedule id a row names, and one nothing has."""
    if "{schedule_id}" in path:
        return world.things["globex"].schedule_id, "no-such-schedule"
    return world.things["globex"].run_id, "no-such-run"


@pytest.fixture
async def world(make_app: AppFactory) -> AsyncIterator[tuple[httpx.AsyncClient, TenantWorld]]:
    app = make_app([parity_agent()])
    async with served(app, tokens=TENANT_TOKENS, roles=TENANT_ROLES) as http, running_worker(app):
        yield http, await tenant_world(http)


async def test_every_route_every_role_own_and_other_tenant_answers_as_the_matrix_says(
    world: tuple[httpx.AsyncClient, TenantWorld],
) -> None:
    api, things = world
    root = httpx.AsyncClient(base_url=str(api.base_url).removesuffix("/api/").removesuffix("/api"), timeout=60)
    failures: list[str] = []
    async with root as http:
        for row in sorted(matrix(), key=lambda row: row.method == "DELETE"):  # deletes last: the things stay
            if row.other in ("open", "signed"):
                continue
            for role in ROLES:
                token = f"tok-{role}"
                for tenant in ("acme", "globex"):
                    path, query = _concrete(row.path, things, tenant)
                    status, text = await _ask(
                        http, row.method, path, token=token, query=query, body=_body(row, things, tenant)
                    )
                    expected = _expected(row, role, tenant)
                    problem = await _check(http, row, role, tenant, status, text, expected, things, token)
                    if problem:
                        failures.append(f"{row.method} {row.path} as {role} in {tenant}: {problem}")
    assert failures == [], "\n".join(failures)


def _expected(row: Row, role: str, tenant: str) -> str:
    own = row.own[role]
    if tenant == "acme" or row.other == "n/a":
        return own
    if own == "no" and row.other != "404":
        return "no"
    return row.other


async def _check(
    http: httpx.AsyncClient,
    row: Row,
    role: str,
    tenant: str,
    status: int,
    text: str,
    expected: str,
    world: TenantWorld,
    token: str,
) -> str | None:
    if expected == "yes":
        return None if status not in (401, 403) else f"refused: {status} {text}"
    if expected in ("no", "403"):
        if status != 403:
            return f"expected 403, got {status} {text}"
        if expected == "403" and tenant not in text:
            return f"the 403 does not name the tenant: {text}"
        return None
    if expected == "hidden":
        if status in (401, 403):
            return f"refused: {status} {text}"
        theirs = world.things["globex"]
        leaked = [thing for thing in (theirs.run_id, theirs.schedule_id) if thing in text]
        return f"shows {leaked}" if leaked else None
    if expected == "404":
        real, missing = _missing(row.path, world)
        path, query = _concrete(row.path, world, tenant)
        path = path.replace(real, missing)
        query = {key: value.replace(real, missing) for key, value in query.items()}
        body = _body(row, world, tenant)
        body = {key: missing if value == real else value for key, value in body.items()}
        none_status, none_text = await _ask(http, row.method, path, token=token, query=query, body=body)
        if (status, text.replace(real, missing)) != (none_status, none_text):
            return f"answered {status} {text}, not as a run nothing has: {none_status} {none_text}"
        return None
    return f"unknown cell {expected!r}"


def test_the_matrix_marks_only_known_cells() -> None:
    for row in matrix():
        assert set(row.own.values()) <= {"yes", "no", "open", "signed"}, row
        assert row.other in {"404", "403", "hidden", "n/a", "open", "signed"}, row
        assert re.fullmatch(r"[a-z]+\.[a-z]+|health|ready", row.action), row
