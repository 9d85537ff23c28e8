"""Tenants over HTTP: another tenant's runs, forks, threads, schedules' runs and cursors stay out of sight, through
the Python HTTP client, the official TypeScript client and the CLI's ``api`` commands; and the policy hook. A chosen
run or schedule id taken by another tenant is answered exactly as one taken by the caller's own."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tempo_agents.identity import Principal
from tempo_agents.server.access import AccessTarget, Decision, Filter, Verdict
from tests.conftest import AppFactory, running_worker
from tests.support.cli_processes import api_data, cli
from tests.support.clients import start_node_client
from tests.support.http_api import parity_agent, served
from tests.support.polling import until
from tests.support.tenants import TENANT_ROLES, TENANT_TOKENS, TenantWorld, paused_schedule, tenant_world

ROOT = {"Authorization": "Bearer tok-root"}
VIEWER = {"Authorization": "Bearer tok-viewer"}
OPERATOR = {"Authorization": "Bearer tok-operator"}
NOBODY = "no-such-run"


@pytest.fixture
async def world(make_app: AppFactory) -> AsyncIterator[tuple[httpx.AsyncClient, TenantWorld]]:
    app = make_app([parity_agent()])
    async with served(app, tokens=TENANT_TOKENS, roles=TENANT_ROLES) as http, running_worker(app):
        yield http, await tenant_world(http)


async def _as_if_missing(
    http: httpx.AsyncClient, method: str, path: str, theirs: str, headers: dict[str, str], **kwargs: Any
) -> tuple[int, str]:
    """The answer for ``path`` naming ``theirs``, checked to be the answer for the same path naming no run."""
    answer = await http.request(method, path, headers=headers, **kwargs)
    params = {key: value.replace(theirs, NOBODY) for key, value in kwargs.pop("params", {}).items()}
    if "json" in kwargs:
        kwargs["json"] = json.loads(json.dumps(kwargs["json"]).replace(theirs, NOBODY))
    missing = await http.request(method, path.replace(theirs, NOBODY), headers=headers, params=params, **kwargs)
    assert answer.status_code == 404, answer.text
    assert (answer.status_code, answer.text.replace(theirs, NOBODY)) == (missing.status_code, missing.text)
    return answer.status_code, answer.text


async def test_another_tenants_run_fork_and_scheduled_run_are_answered_as_none(
    world: tuple[httpx.AsyncClient, TenantWorld],
) -> None:
    http, things = world
    mine, theirs = things.things["acme"].run_id, things.things["globex"].run_id

    # compare?a=mine&b=theirs, a fork of theirs, its stream, its forks
    await _as_if_missing(http, "GET", "/runs/compare", theirs, OPERATOR, params={"a": mine, "b": theirs})
    await _as_if_missing(http, "POST", f"/runs/{theirs}/fork", theirs, OPERATOR, json={})
    await _as_if_missing(http, "GET", f"/runs/{theirs}/stream", theirs, VIEWER)
    await _as_if_missing(http, "GET", f"/runs/{theirs}/forks", theirs, VIEWER)
    mine_compared = await http.get("/runs/compare", params={"a": mine, "b": mine}, headers=VIEWER)
    assert mine_compared.status_code == 200, mine_compared.text

    # a fork root made of their run is theirs too; a fork of mine into their tenant is refused, naming it
    forked = await http.post(f"/runs/{theirs}/fork", json={}, headers=ROOT)
    assert forked.status_code == 201, forked.text
    await _as_if_missing(http, "GET", f"/runs/{forked.json()['runId']}", forked.json()["runId"], OPERATOR)
    into = await http.post(
        f"/runs/{mine}/fork", json={"memory": {"thread": "t", "resource": "globex"}}, headers=OPERATOR
    )
    assert into.status_code == 403 and "globex" in into.json()["error"]

    # a run id guessed from a schedule's naming
    triggered = await http.post(
        f"/schedules/{things.things['globex'].schedule_id}/trigger", json={"overlap": "allow_all"}, headers=ROOT
    )
    assert triggered.status_code == 202, triggered.text
    scheduled_run = triggered.json()["runId"]
    assert scheduled_run.startswith(things.things["globex"].schedule_id)
    await _as_if_missing(http, "GET", f"/runs/{scheduled_run}", scheduled_run, OPERATOR)
    await _as_if_missing(
        http, "GET", f"/schedules/{things.things['globex'].schedule_id}", things.things["globex"].schedule_id, VIEWER
    )

    # a thread id: another tenant's thread named under mine is an empty thread; naming their tenant is a 403
    their_thread = things.things["globex"].thread_id
    under_mine = await http.get(f"/threads/{their_thread}", params={"resourceId": "acme"}, headers=VIEWER)
    assert under_mine.status_code == 200 and theirs not in under_mine.text
    assert under_mine.json()["messages"] == []
    named = await http.get(f"/threads/{their_thread}", params={"resourceId": "globex"}, headers=VIEWER)
    assert named.status_code == 403 and "globex" in named.json()["error"]
    own = await http.get(f"/threads/{things.things['acme'].thread_id}", params={"resourceId": "acme"}, headers=VIEWER)
    assert own.status_code == 200 and mine in own.text

    # starting a run, a schedule or an answer into their tenant
    start = await http.post(
        "/agents/assistant/generate",
        json={"messages": "hi", "memory": {"thread": "t", "resource": "globex"}},
        headers=OPERATOR,
    )
    assert start.status_code == 403 and "globex" in start.json()["error"]
    schedule = await http.post(
        "/schedules",
        json={"agentId": "assistant", "message": "hi", "every": "1h", "thread": "t", "resource": "globex"},
        headers=OPERATOR,
    )
    assert schedule.status_code == 403 and "globex" in schedule.json()["error"]
    await _as_if_missing(
        http, "POST", "/inbox/answer", theirs, OPERATOR,
        json={"runId": theirs, "toolCallId": "call-c1", "action": "resume", "resumeData": {"confirmed": True}},
    )  # fmt: skip


async def _all_pages(http: httpx.AsyncClient, headers: dict[str, str], cursor: str | None = None) -> list[list[str]]:
    pages: list[list[str]] = []
    while True:
        params: dict[str, Any] = {"perPage": 1, **({"cursor": cursor} if cursor else {})}
        page = (await http.get("/runs", params=params, headers=headers)).json()
        pages.append([f"{run['resourceId']}:{run['runId']}" for run in page["runs"]])
        cursor = page["nextCursor"]
        if cursor is None:
            return pages


async def test_listings_and_cursors_hold_only_the_callers_tenant(world: tuple[httpx.AsyncClient, TenantWorld]) -> None:
    http, things = world
    for tenant, count in (("globex", 3), ("acme", 1)):
        for number in range(count):
            memory = {"thread": f"more-{tenant}-{number}", "resource": tenant}
            done = await http.post(
                "/agents/assistant/generate", json={"messages": "hi", "memory": memory}, headers=ROOT
            )
            assert done.status_code == 200, done.text

    async def settled() -> bool | None:  # a run that closes moves in visibility's order: page once they all did
        runs = (await http.get("/runs", params={"perPage": 100}, headers=ROOT)).json()["runs"]
        return (len(runs) == 6 and all(run["closedAt"] for run in runs if run["status"] != "suspended")) or None

    await until(settled)
    pages = await _all_pages(http, VIEWER)
    if pages[-1] == []:  # visibility may hand out a cursor after a full last page, and an empty page for it
        pages.pop()
    assert all(len(page) == 1 for page in pages)  # full pages
    shown = [page[0] for page in pages]
    assert len(set(shown)) == len(shown) and {run.split(":")[0] for run in shown} == {"acme"}, shown
    everything = (await http.get("/runs", params={"perPage": 100}, headers=ROOT)).json()["runs"]
    acme = {f"acme:{run['runId']}" for run in everything if run["resourceId"] == "acme"}
    assert set(shown) == acme and len(acme) < len(everything), (shown, everything)
    assert (await http.get("/runs", headers=VIEWER)).json()["total"] == len(acme)
    # root's cursor (made over every tenant) reaches no further for the viewer
    first = (await http.get("/runs", params={"perPage": 1}, headers=ROOT)).json()
    later = await _all_pages(http, VIEWER, first["nextCursor"])
    assert {run.split(":")[0] for page in later for run in page} <= {"acme"}
    asked = (await http.get("/runs", params={"resource": "globex"}, headers=VIEWER)).json()
    assert (asked["runs"], asked["total"]) == ([], 0)

    mine, theirs = things.things["acme"].run_id, things.things["globex"].run_id
    inbox = (await http.get("/inbox", headers=VIEWER)).json()
    assert [item["runId"] for item in inbox["items"]] == [mine] and inbox["total"] == 1
    waiting = (await http.get("/agents/assistant/suspended-runs", headers=VIEWER)).json()
    assert [run["runId"] for run in waiting["runs"]] == [mine]
    schedules = (await http.get("/schedules", headers=VIEWER)).json()
    assert [schedule["id"] for schedule in schedules] == [things.things["acme"].schedule_id]
    table = (await http.get("/dashboard/runs", headers=VIEWER)).json()
    assert {run["resourceId"] for run in table["runs"]} == {"acme"}
    for run_id in (mine, theirs):
        answer = {"runId": run_id, "toolCallId": "call-c1", "action": "resume", "resumeData": {"confirmed": False}}
        assert (await http.post("/inbox/answer", json=answer, headers=ROOT)).status_code == 200
    answered = (await http.get("/inbox/answered", headers=VIEWER)).json()
    assert [item["runId"] for item in answered["items"]] == [mine] and answered["total"] == 1
    assert len((await http.get("/inbox/answered", headers=ROOT)).json()["items"]) == 2


async def test_a_policy_denies_filters_and_sees_each_target(make_app: AppFactory) -> None:
    seen: list[tuple[str, str, str | None]] = []

    def policy(principal: Principal, action: str, target: AccessTarget) -> Verdict:
        seen.append((principal.name, action, target.tenant))
        if principal.name == "auditor":
            return Filter(frozenset({"globex"}))  # sees every tenant by its role, globex only by this rule
        if action == "runs.cancel":
            return Decision.DENY
        return Decision.ALLOW

    tokens = {**TENANT_TOKENS, "tok-auditor": "auditor"}
    roles = {**TENANT_ROLES, "auditor": {"*": ["viewer"]}}
    app = make_app([parity_agent()])
    async with served(app, tokens=tokens, roles=roles, authorize=policy) as http, running_worker(app):
        things = await tenant_world(http)
        mine, theirs = things.things["acme"].run_id, things.things["globex"].run_id
        auditor = {"Authorization": "Bearer tok-auditor"}
        listed = (await http.get("/runs", headers=auditor)).json()
        assert [run["runId"] for run in listed["runs"]] == [theirs]
        assert (await http.get(f"/runs/{theirs}", headers=auditor)).status_code == 200
        await _as_if_missing(http, "GET", f"/runs/{mine}", mine, auditor)
        cancelled = await http.post(f"/runs/{mine}/cancel", headers=OPERATOR)
        assert cancelled.status_code == 403 and "policy" in cancelled.json()["error"]
        assert ("operator-in-acme", "runs.cancel", "acme") in seen
        assert (await http.get(f"/runs/{mine}", headers=OPERATOR)).json()["status"] == "suspended"


def _as_sent(answer: httpx.Response) -> tuple[int, list[tuple[str, str]], bytes]:
    """An answer's status, headers (but its date) and body bytes."""
    headers = [(name, value) for name, value in answer.headers.multi_items() if name != "date"]
    return answer.status_code, headers, answer.content


async def test_a_chosen_id_taken_by_another_tenant_is_answered_as_one_taken_by_ones_own(make_app: AppFactory) -> None:
    tokens = {**TENANT_TOKENS, "tok-globex-operator": "operator-in-globex"}
    roles = {**TENANT_ROLES, "operator-in-globex": {"globex": ["operator"]}}
    app = make_app([parity_agent()])
    async with served(app, tokens=tokens, roles=roles) as http, running_worker(app):
        acme = (await tenant_world(http)).things["acme"]  # ids taken in acme
        callers = {"acme": OPERATOR, "globex": {"Authorization": "Bearer tok-globex-operator"}}
        for route in ("generate", "stream"):
            answers = {
                tenant: await http.post(
                    f"/agents/assistant/{route}",
                    json={"messages": "hi", "runId": acme.run_id, "memory": {"thread": "t-ids", "resource": tenant}},
                    headers=headers,
                )
                for tenant, headers in callers.items()
            }
            assert answers["acme"].status_code == 409 and "already exists" in answers["acme"].text, route
            assert _as_sent(answers["globex"]) == _as_sent(answers["acme"]), route
        schedules = {
            tenant: await http.post(
                "/schedules", json=paused_schedule(acme.schedule_id, "t-ids", tenant), headers=headers
            )
            for tenant, headers in callers.items()
        }
        assert schedules["acme"].status_code == 409 and "already exists" in schedules["acme"].text, schedules[
            "acme"
        ].text
        assert _as_sent(schedules["globex"]) == _as_sent(schedules["acme"])


async def test_the_official_client_sees_only_its_tenant(world: tuple[httpx.AsyncClient, TenantWorld]) -> None:
    http, things = world
    url = str(http.base_url).removesuffix("/").removesuffix("/api")
    env = {
        "TEMPO_URL": url,
        "TEMPO_TOKEN": "tok-operator",
        "MINE": things.things["acme"].run_id,
        "THEIRS": things.things["globex"].run_id,
    }
    node = await start_node_client("tenant_client.mjs", env)
    out, err = await asyncio.wait_for(node.communicate(), 120)
    assert node.returncode == 0, err.decode()
    report = json.loads(out.decode().strip().splitlines()[-1])
    assert report["suspended"] == [things.things["acme"].run_id]
    theirs = things.things["globex"].run_id
    for name in ("resumeTheirs", "observeTheirs", "approveTheirs"):
        answer, missing = report[name], report[name.replace("Theirs", "Missing")]
        assert answer["status"] == 404, (name, answer)
        assert json.dumps(answer).replace(theirs, NOBODY) == json.dumps(missing), name
    assert report["startTheirs"]["status"] == 403 and "globex" in json.dumps(report["startTheirs"]["body"])


@pytest.mark.timeout(300)  # a few CLI processes, each importing the package
async def test_the_cli_api_commands_see_only_their_tenant(world: tuple[httpx.AsyncClient, TenantWorld]) -> None:
    http, things = world
    url = str(http.base_url).removesuffix("/").removesuffix("/api")
    mine, theirs = things.things["acme"].run_id, things.things["globex"].run_id
    code, out, err = await cli("api", "--url", url, "--token", "tok-viewer", "run", "list")
    assert code == 0, err
    assert [run["runId"] for run in api_data(out)["runs"]] == [mine]
    code, out, err = await cli("api", "--url", url, "--token", "tok-viewer", "run", "show", theirs)
    assert code == 1 and json.loads(err)["error"]["details"] == {
        "status": 404,
        "body": {"error": f'no run "{theirs}" exists'},
    }
    code, out, err = await cli("api", "--url", url, "--token", "tok-viewer", "run", "cancel", mine)
    assert code == 1 and json.loads(err)["error"]["details"]["status"] == 403
    code, out, err = await cli("api", "--url", url, "--token", "tok-viewer", "schedule", "list")
    assert code == 0, err
    assert [schedule["id"] for schedule in api_data(out)] == [things.things["acme"].schedule_id]
