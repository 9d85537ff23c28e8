"""Every action that changes something over HTTP leaves an audit record with who, which tenant, what, how it ended,
from where: against the real server, the Temporal dev server and the suite's store (``--store``)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent, served

TOKENS = {"alice-token": "alice", "bob-token": "bob"}
ALICE = {"authorization": "Bearer alice-token", "user-agent": "audit-test/1"}


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
