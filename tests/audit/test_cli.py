"""``tempo-agents audit verify`` and ``audit export`` on both stores, and ``tempo-agents api audit`` against a real
server: verify exits 0 on an intact chain and 1 naming the first tampered record; export prints JSON lines from a
time on; the api command lists and filters what the server recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from starlette.routing import BaseRoute

from tempo_agents.audit import DONE, AuditEntry, audit_time
from tempo_agents.server.app import create_server
from tempo_agents.server.audit import ROUTE_ACTIONS
from tempo_agents.server.audit.actions import action_of
from tempo_agents.server.serving import ApiServer
from tempo_agents.store import Store
from tests.conftest import AppFactory, running_worker
from tests.support.cli_processes import api_data, cli
from tests.support.http_api import parity_agent
from tests.support.store_contents import tamper


async def test_verify_and_export(store: Store, store_url: str) -> None:
    early = [
        AuditEntry(action="cancel", target=f"r{n}", outcome=DONE, at=f"2026-01-0{n}T00:00:00.000000Z") for n in (1, 2)
    ]
    late = AuditEntry(action="steer", target="r3", outcome=DONE, principal="alice", tenant="acme")
    await store.append_audit([*early, late])

    code, out, err = await cli("audit", "verify", "--store", store_url)
    assert (code, out.strip()) == (0, "audit chain intact: 3 records"), err

    code, out, err = await cli("audit", "export", "--store", store_url, "--since", "2026-01-02")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0, err
    assert [(r["seq"], r["target"]) for r in lines] == [(2, "r2"), (3, "r3")]
    assert (lines[1]["principal"], lines[1]["tenant"], lines[1]["prevHash"]) == ("alice", "acme", lines[0]["hash"])
    code, out, _ = await cli("audit", "export", "--store", store_url, "--until", "2026-01-02T00:00:00Z")
    assert [json.loads(line)["target"] for line in out.splitlines()] == ["r1"]
    code, _, err = await cli("audit", "export", "--store", store_url, "--since", "last week")
    assert code == 2 and "--since: not an ISO 8601 time" in err

    await tamper(store_url, [("UPDATE audit SET target = ? WHERE seq = ?", ("r-forged", 2))])
    code, out, err = await cli("audit", "verify", "--store", store_url)
    assert code == 1
    assert "audit chain broken: record 2 was altered" in err


async def test_api_audit_lists_and_filters_what_the_server_recorded(make_app: AppFactory) -> None:
    app = make_app([parity_agent(id="listed")])
    server = ApiServer(app, port=0, tokens={"tok-ops": "ops"})
    await server.start()
    try:
        async with running_worker(app):
            token = ["--url", server.url, "--token", "tok-ops"]
            code, out, err = await cli("api", *token, "agent", "generate", "listed", "charge", "--resource", "acme",
                                       "--thread", "t-cli")  # fmt: skip
            assert code == 0, err
            code, out, err = await cli("api", *token, "audit", "--action", "start")
            assert code == 0, err
            [start] = api_data(out)["records"]
            assert (start["principal"], start["tenant"], start["outcome"]) == ("ops", "acme", "done")
            code, out, err = await cli("api", *token, "audit", "--tenant", "globex")
            assert (code, api_data(out)["records"]) == (0, [])
            code, out, err = await cli("api", *token, "audit", "--since", audit_time())
            assert code == 0 and api_data(out)["records"] == []
    finally:
        await server.stop()


def endpoint_name(route: object) -> str | None:
    """A route's endpoint as the table of route actions names it."""
    endpoint = getattr(route, "endpoint", None)
    if endpoint is None:
        return None
    return f"{endpoint.__module__.removeprefix('tempo_agents.server.')}.{endpoint.__name__}"


def every_route(routes: Sequence[BaseRoute]) -> Iterator[BaseRoute]:
    """The routes, those of included routers too."""
    for route in routes:
        included = getattr(route, "original_router", None)
        yield from every_route(included.routes) if included is not None else (route,)


def test_every_route_action_names_a_route_and_every_changing_route_has_one(make_app: AppFactory) -> None:
    api = create_server(make_app([parity_agent()]))
    routes = {endpoint_name(route): route for route in every_route(api.routes)}
    assert set(ROUTE_ACTIONS) <= set(routes)
    endpoints: dict[str, Any] = {name: vars(route).get("endpoint") for name, route in routes.items() if name}
    assert all(action_of(endpoints[name]) is ROUTE_ACTIONS[name] for name in ROUTE_ACTIONS)
    changing = {
        name
        for name, route in routes.items()
        if set(getattr(route, "methods", None) or ()) & {"POST", "PATCH", "DELETE"}
    }
    # a replay from an offset, and the codec's encoding and decoding of payloads, change nothing
    assert changing - set(ROUTE_ACTIONS) == {"routes.agents.observe", "routes.codec.encode", "routes.codec.decode"}
