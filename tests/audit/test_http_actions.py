"""Every action that changes something over HTTP leaves an audit record with who, which tenant, what, how it ended,
from where: against the real server, the Temporal dev server and the suite's store (``--store``)."""

from __future__ import annotations

import base64
from typing import Any

import httpx
from fastapi import Request

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.approvals.answer_links import AnswerLinks, approval_choices
from tempo_agents.identity import Principal, Role
from tempo_agents.server.errors import ApiError
from tests.conftest import AppFactory, running_worker
from tests.support.approval_agents import TRANSFER_ARGS, payments_agent
from tests.support.http_api import parity_agent, served
from tests.support.tenants import ROOT, TENANT_ROLES, TENANT_TOKENS, tenant_world
from tests.support.webhook_deliveries import signed_delivery

TOKENS = {"alice-token": "alice", "bob-token": "bob"}
ALICE = {"authorization": "Bearer alice-token", "user-agent": "audit-test/1"}
SECRET = "whsec_" + base64.b64encode(b"thirty-two bytes of audit secret").decode()
OTHER_ARGS = {"amount": 40, "to": "globex"}


async def records(http: httpx.AsyncClient, **filters: str) -> list[dict[str, Any]]:
    answer = await http.get("/audit", params=filters, headers=ALICE)
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()["records"]
    return found


def fields(record: dict[str, Any], *names: str) -> tuple[Any, ...]:
    return tuple(record[name] for name in names)


async def test_start_answers_cancel_and_refused_sign_in_are_recorded(make_app: AppFactory) -> None:
    app = make_app([parity_agent(id="audited")])
    async with served(app, tokens=TOKENS) as http, running_worker(app):
        started = await http.post(
            "/agents/audited/generate",
            json={"messages": "charge", "memory": {"thread": "t-1", "resource": "acme"}},
            headers=ALICE,
        )
        run_id = started.json()["runId"]
        [start] = await records(http, action="start")
        assert fields(start, "principal", "tenant", "target", "outcome", "status") == (
            "alice",
            "acme",
            run_id,
            "done",
            200,
        )
        assert fields(start, "client", "userAgent") == ("127.0.0.1", "audit-test/1")
        assert start["at"] <= start["completedAt"]

        refused = await http.post(f"/runs/{run_id}/resume", json={"resumeData": {"confirmed": 3}}, headers=ALICE)
        assert refused.status_code == 422
        accepted = await http.post(f"/runs/{run_id}/resume", json={"resumeData": {"confirmed": False}}, headers=ALICE)
        assert accepted.status_code == 200
        answers = await records(http, action="answer")
        assert [fields(a, "outcome", "status", "tenant", "principal") for a in answers] == [
            ("done", 200, "acme", "alice"),
            ("refused", 422, "acme", "alice"),
        ]
        assert answers[0]["target"] == run_id  # the body named no tool call: the run's only waiting one

        closed = await http.post(f"/runs/{run_id}/cancel", headers={"authorization": "Bearer bob-token"})
        [cancel] = await records(http, action="cancel")
        assert fields(cancel, "principal", "tenant", "target") == ("bob", "acme", run_id)
        assert cancel["outcome"] == ("done" if closed.status_code < 400 else "refused")
        assert cancel["status"] == closed.status_code

        forged = await http.post(f"/runs/{run_id}/cancel", headers={"authorization": "Bearer forged"})
        assert forged.status_code == 401
        [sign_in] = await records(http, action="sign-in")
        assert fields(sign_in, "principal", "outcome", "status", "target") == (
            None,
            "refused",
            401,
            f"POST /api/runs/{run_id}/cancel",
        )
        assert len(await records(http, action="cancel")) == 1  # the refused token changed nothing


def check(record: dict[str, Any], answer: httpx.Response, action: str, target: str | None) -> None:
    """The record says what was done to what, by alice from this test, and how the server answered."""
    assert (record["action"], record["target"], record["principal"]) == (action, target, "alice"), record
    assert record["status"] == answer.status_code, (record, answer.text)
    status = answer.status_code
    assert record["outcome"] == ("done" if status < 400 else "refused" if status < 500 else "failed"), record
    code = answer.json().get("code") if status >= 400 else None
    assert record["code"] == code, (record, answer.text)
    assert (record["client"], record["userAgent"]) == ("127.0.0.1", "audit-test/1")


async def newest(http: httpx.AsyncClient, action: str) -> dict[str, Any]:
    return (await records(http, action=action))[0]


async def test_run_operations_are_recorded_with_the_runs_tenant(make_app: AppFactory) -> None:
    app = make_app([parity_agent(id="operated")])
    async with served(app, tokens=TOKENS) as http, running_worker(app):
        started = await http.post(
            "/agents/operated/generate",
            json={"messages": "charge", "memory": {"thread": "t-2", "resource": "globex"}},
            headers=ALICE,
        )
        run_id = started.json()["runId"]
        steered = await http.post(f"/runs/{run_id}/steer", json={"message": "Be brief"}, headers=ALICE)
        check(await newest(http, "steer"), steered, "steer", run_id)
        raised = await http.post(f"/runs/{run_id}/budget", json={"action": "raise"}, headers=ALICE)
        assert raised.status_code >= 400  # the run does not wait for its budget
        check(await newest(http, "budget.raise"), raised, "budget.raise", run_id)
        ended = await http.post(f"/runs/{run_id}/budget", json={"action": "end"}, headers=ALICE)
        check(await newest(http, "budget.end"), ended, "budget.end", run_id)
        forked = await http.post(f"/runs/{run_id}/fork", json={"atStep": 0}, headers=ALICE)
        assert forked.status_code == 201, forked.text
        fork_record = await newest(http, "fork")
        check(fork_record, forked, "fork", forked.json()["runId"])  # the run the fork made
        assert fork_record["tenant"] == "globex"
        [fork_intent] = [r for r in await app.store.audit_chain() if r.entry.id == fork_record["id"]]
        assert fork_intent.entry.target == run_id  # the source run, kept as the target of the fork's intent
        retried = await http.post(f"/runs/{run_id}/retry", headers=ALICE)
        assert retried.status_code == 201, retried.text
        check(await newest(http, "retry"), retried, "retry", retried.json()["runId"])  # a retry is a fork too
        interrupted = await http.post(f"/runs/{run_id}/interrupt", headers=ALICE)
        check(await newest(http, "interrupt"), interrupted, "interrupt", run_id)
        rolled_back = await http.post(f"/runs/{run_id}/rollback", headers=ALICE)
        check(await newest(http, "rollback"), rolled_back, "rollback", run_id)
        unknown = await http.post("/runs/no-such-run/cancel", headers=ALICE)
        check(await newest(http, "cancel"), unknown, "cancel", "no-such-run")

        everything = await records(http, perPage="100")
        assert {r["tenant"] for r in everything if r["target"] == run_id} == {"globex"}
        assert [r["action"] for r in await records(http, tenant="globex", action="fork")] == ["fork"]
        first_page = (await http.get("/audit", params={"perPage": "3"}, headers=ALICE)).json()
        second_page = (
            await http.get("/audit", params={"perPage": "3", "cursor": first_page["nextCursor"]}, headers=ALICE)
        ).json()
        assert [r["seq"] for r in first_page["records"] + second_page["records"]] == [r["seq"] for r in everything[:6]]
        assert (await http.get("/audit", params={"since": "yesterday"}, headers=ALICE)).status_code == 400


async def test_schedule_changes_are_recorded(make_app: AppFactory) -> None:
    app = make_app([parity_agent(id="reporter")])
    schedule_id = f"report-{app.task_queue}"
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        body = {"agentId": "reporter", "message": "hi", "every": "1h", "scheduleId": schedule_id}
        body |= {"thread": "ops", "resource": "acme"}
        created = await http.post("/schedules", json=body, headers=ALICE)
        assert created.status_code == 201, created.text
        check(await newest(http, "schedule.create"), created, "schedule.create", schedule_id)
        assert (await newest(http, "schedule.create"))["tenant"] == "acme"
        updated = await http.patch(f"/schedules/{schedule_id}", json={"message": "hello"}, headers=ALICE)
        assert updated.status_code < 300, updated.text
        check(await newest(http, "schedule.update"), updated, "schedule.update", schedule_id)
        paused = await http.post(f"/schedules/{schedule_id}/pause", json={"note": "audit"}, headers=ALICE)
        assert paused.status_code < 300, paused.text
        check(await newest(http, "schedule.pause"), paused, "schedule.pause", schedule_id)
        unpaused = await http.post(f"/schedules/{schedule_id}/unpause", headers=ALICE)
        assert unpaused.status_code < 300, unpaused.text
        check(await newest(http, "schedule.unpause"), unpaused, "schedule.unpause", schedule_id)
        triggered = await http.post(f"/schedules/{schedule_id}/trigger", headers=ALICE)
        assert triggered.status_code < 300, triggered.text
        check(await newest(http, "schedule.trigger"), triggered, "schedule.trigger", schedule_id)
        deleted = await http.delete(f"/schedules/{schedule_id}", headers=ALICE)
        assert deleted.status_code == 204
        record = await newest(http, "schedule.delete")
        assert (record["target"], record["outcome"], record["status"]) == (schedule_id, "done", 204)
        changes = await records(http, target=schedule_id)
        assert [r["action"] for r in changes] == [
            "schedule.delete",
            "schedule.trigger",
            "schedule.unpause",
            "schedule.pause",
            "schedule.update",
            "schedule.create",
        ]
        assert [r["tenant"] for r in changes] == ["acme"] * 6  # the schedule's tenant, though only create names it
        assert [r["action"] for r in await records(http, tenant="acme", target=schedule_id)][:1] == ["schedule.delete"]


async def test_event_ingest_answer_links_and_dashboard_answers_are_recorded(make_app: AppFactory) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, calls=[TRANSFER_ARGS, OTHER_ARGS], tool_approvers=["alice"])
    triage = Agent(id="triage", model=ScriptedModel([ScriptedResponse(text="noted")]))
    app = make_app([agent, triage], event_secrets={"triage": SECRET})
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        body, headers = signed_delivery({"id": 7}, webhook_id="msg-audit-1", secret=SECRET)
        ingested = await http.post("/agents/triage/events", content=body, headers={**headers, "user-agent": "hook/2"})
        assert ingested.status_code == 202, ingested.text
        event = await newest(http, "event.ingest")
        assert (event["target"], event["principal"], event["outcome"], event["status"]) == ("triage", None, "done", 202)
        assert event["userAgent"] == "hook/2"

        first = await app.agent(agent.id).generate("pay", memory={"thread": "t-pay", "resource": "initech"})
        run_id = first.run_id
        root = f"{http.base_url.scheme}://{http.base_url.netloc.decode()}"
        app.answer_links = AnswerLinks(["link-secret-audit"], base_url=root)
        made = app.answer_links.links(
            run_id=run_id, tool_call_id="call-1", round=0, args=TRANSFER_ARGS, choices=approval_choices(),
            principal="alice",
        )  # fmt: skip
        link = made["answers"]["approve"]
        used = await http.post(link)  # no bearer token: the link is the credential
        assert used.status_code == 200, used.text
        again = await http.post(link)
        assert again.status_code == 409
        link_uses = await records(http, action="answer-link")
        assert [(r["principal"], r["target"], r["tenant"], r["outcome"], r["status"]) for r in link_uses] == [
            ("alice", f"{run_id}/call-1", "initech", "refused", 409),
            ("alice", f"{run_id}/call-1", "initech", "done", 200),
        ]

        answered = await http.post(
            "/inbox/answer", json={"runId": run_id, "toolCallId": "call-2", "action": "approve"}, headers=ALICE
        )
        assert answered.status_code == 200, answered.text
        check(await newest(http, "answer"), answered, "answer", f"{run_id}/call-2")
        assert (await newest(http, "answer"))["tenant"] == "initech"


async def test_a_signed_in_identity_reads_only_its_tenants_records(make_app: AppFactory) -> None:
    viewers = {
        "acme-viewer": Principal("carol", roles={"acme": frozenset({Role.VIEWER})}),
        "admin": Principal.administrator("dana"),
    }

    def sign_in(request: Request) -> None:  # what sign-in puts in request.state.identity
        name = request.headers.get("x-identity")
        if name == "blocked" and request.method == "POST":
            raise ApiError(403, "not yours to change", code="FORBIDDEN")
        if name in viewers:
            request.state.identity = viewers[name]

    app = make_app([parity_agent(id="tenanted")])
    async with served(app, authorize=sign_in) as http, running_worker(app):
        for resource in ("acme", "globex"):
            await http.post(
                "/agents/tenanted/generate",
                json={"messages": "charge", "memory": {"thread": f"t-{resource}", "resource": resource}},
                headers={"x-identity": "admin"},
            )
        seen = await http.get("/audit", headers={"x-identity": "acme-viewer"})
        assert [(r["tenant"], r["principal"]) for r in seen.json()["records"]] == [("acme", "dana")]
        assert (await http.get("/audit", params={"tenant": "globex"}, headers={"x-identity": "acme-viewer"})).json()[
            "records"
        ] == []
        everything = await http.get("/audit", headers={"x-identity": "admin"})
        assert [r["tenant"] for r in everything.json()["records"]] == ["globex", "acme"]

        refused = await http.post("/runs/some-run/cancel", headers={"x-identity": "blocked", "user-agent": "ops/2"})
        assert refused.status_code == 403
        [record] = (await http.get("/audit", params={"action": "cancel"}, headers={"x-identity": "admin"})).json()[
            "records"
        ]
        assert (record["target"], record["outcome"], record["status"], record["code"], record["userAgent"]) == (
            "some-run",
            "refused",
            403,
            "FORBIDDEN",
            "ops/2",
        )


async def test_changing_requests_refused_before_routing_are_recorded(make_app: AppFactory) -> None:
    app = make_app([parity_agent(id="limited")])
    async with served(app, tokens=TOKENS, max_body_bytes=2048) as http, running_worker(app):
        started = await http.post(
            "/agents/limited/generate",
            json={"messages": "charge", "memory": {"thread": "t-3", "resource": "hooli"}},
            headers=ALICE,
        )
        run_id = started.json()["runId"]
        too_large = await http.post(f"/runs/{run_id}/steer", json={"message": "x" * 4096}, headers=ALICE)
        assert too_large.status_code == 413
        [steer] = await records(http, action="steer")
        assert fields(steer, "target", "tenant", "principal", "outcome", "status", "userAgent") == (
            run_id,
            "hooli",
            "alice",
            "refused",
            413,
            "audit-test/1",
        )
        nested: Any = "deep"
        for _ in range(100):
            nested = [nested]
        too_deep = await http.post(
            "/agents/limited/generate", json={"messages": "hi", "requestContext": {"x": nested}}, headers=ALICE
        )
        assert too_deep.status_code == 400 and "nested more than" in too_deep.text
        start = await newest(http, "start")
        assert fields(start, "target", "principal", "outcome", "status") == ("limited", "alice", "refused", 400)
        assert len(await records(http, action="start")) == 2  # the run started, and the refused one

        unchanging = await http.post("/codec/encode", content=b"[" * 100 + b"]" * 100, headers=ALICE)
        assert unchanging.status_code in (400, 404)
        assert len(await records(http, perPage="100")) == 3  # a request that changes nothing leaves nothing


SCHEDULE_CHANGES = [
    ("PATCH", "", {"message": "changed"}, "schedule.update"),
    ("POST", "/pause", {"note": "audit"}, "schedule.pause"),
    ("POST", "/unpause", {}, "schedule.unpause"),
    ("POST", "/trigger", {}, "schedule.trigger"),
    ("POST", "/backfill", {"startAt": "2026-01-01T00:00:00Z", "endAt": "2026-01-01T02:00:00Z"}, "schedule.backfill"),
    ("DELETE", "", None, "schedule.delete"),
]


async def test_changes_refused_by_the_guard_name_the_tenant_it_found_as_runs_do(
    make_app: AppFactory,
) -> None:
    app = make_app([parity_agent()])
    async with served(app, tokens=TENANT_TOKENS, roles=TENANT_ROLES) as http, running_worker(app):
        world = await tenant_world(http)
        mine, theirs = world.things["acme"], world.things["globex"]
        viewer = {"authorization": "Bearer tok-viewer"}  # views acme, may change nothing there
        operator = {"authorization": "Bearer tok-operator"}  # operates acme, sees nothing of globex

        for method, suffix, body, action in SCHEDULE_CHANGES:
            refused = await http.request(method, f"/schedules/{mine.schedule_id}{suffix}", json=body, headers=viewer)
            assert refused.status_code == 403 and "in tenant acme" in refused.text, (action, refused.text)
            record = (await http.get("/audit", params={"action": action}, headers=ROOT)).json()["records"][0]
            assert fields(record, "target", "tenant", "principal", "outcome", "status") == (
                mine.schedule_id,
                "acme",
                "viewer-in-acme",
                "refused",
                403,
            ), action
        schedule = {"agentId": "assistant", "message": "hi", "every": "1h", "thread": "t-refused", "resource": "acme"}
        create_refused = await http.post("/schedules", json=schedule, headers=viewer)
        start_refused = await http.post(
            "/agents/assistant/generate",
            json={"messages": "hi", "memory": {"thread": "t-refused", "resource": "acme"}},
            headers=viewer,
        )
        assert (create_refused.status_code, start_refused.status_code) == (403, 403)
        for action in ("schedule.create", "start"):
            record = (await http.get("/audit", params={"action": action}, headers=ROOT)).json()["records"][0]
            assert fields(record, "tenant", "principal", "status") == ("acme", "viewer-in-acme", 403), action
        cancel_refused = await http.post(f"/runs/{mine.run_id}/cancel", headers=viewer)
        assert cancel_refused.status_code == 403
        cancel_record = (await http.get("/audit", params={"action": "cancel"}, headers=ROOT)).json()["records"][0]
        assert fields(cancel_record, "target", "tenant", "status") == (mine.run_id, "acme", 403)

        # another tenant's: a 404, recorded as a run of another tenant is, under its owner's tenant
        hidden_pause = await http.post(f"/schedules/{theirs.schedule_id}/pause", json={}, headers=operator)
        hidden_cancel = await http.post(f"/runs/{theirs.run_id}/cancel", headers=operator)
        assert (hidden_pause.status_code, hidden_cancel.status_code) == (404, 404)
        everything = (await http.get("/audit", params={"perPage": "100"}, headers=ROOT)).json()["records"]
        [pause_record] = [
            r for r in everything if r["target"] == theirs.schedule_id and r["action"] != "schedule.create"
        ]
        [cancel_theirs] = [r for r in everything if r["target"] == theirs.run_id and r["action"] == "cancel"]
        assert fields(pause_record, "principal", "outcome", "status") == ("operator-in-acme", "refused", 404)
        assert pause_record["tenant"] == cancel_theirs["tenant"] == "globex"

        # acme's administrator reads acme's records: nothing of globex, not even these refusals of its operator
        seen = await http.get("/audit", params={"perPage": "100"}, headers={"authorization": "Bearer tok-admin"})
        assert seen.status_code == 200, seen.text
        assert {r["tenant"] for r in seen.json()["records"]} == {"acme"}
        assert theirs.schedule_id not in seen.text and theirs.run_id not in seen.text and "globex" not in seen.text
