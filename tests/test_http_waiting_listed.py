"""Waiting calls are listed the moment they wait: ``GET /agents/:id/suspended-runs`` and ``GET /inbox`` read the
store, which records a wait in the transaction that journals its chunk and drops it with the accepted answer."""

from __future__ import annotations

from tempo_agents.server.run_views import page_cursor
from tests.conftest import AppFactory, running_worker
from tests.http_support import parity_agent, served, sse_chunks

ROUNDS = 100


async def test_a_suspended_run_is_listed_right_after_its_last_chunk(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        for n in range(ROUNDS):
            memory = {"thread": f"t-{n}", "resource": "u-1"}
            streamed = await http.post("/agents/assistant/stream", json={"messages": "charge 990", "memory": memory})
            chunks = sse_chunks(streamed.content)
            assert chunks[-1]["payload"]["stepResult"]["reason"] == "suspended"
            run_id = chunks[-1]["runId"]

            listing = (await http.get("/agents/assistant/suspended-runs", params={"threadId": f"t-{n}"})).json()
            assert [run["runId"] for run in listing["runs"]] == [run_id], n
            assert listing["runs"][0]["toolCalls"][0]["suspendPayload"] == {"phase": "confirm", "amount": 990}
            assert (listing["total"], listing["runs"][0]["threadId"]) == (1, f"t-{n}")
            inbox = (await http.get("/inbox", params={"agent": "assistant", "perPage": 1})).json()
            assert [item["runId"] for item in inbox["items"]] == [run_id], n
            assert inbox["items"][0]["kind"] == "input" and inbox["total"] == 1

            resumed = await http.post(f"/runs/{run_id}/resume", json={"resumeData": {"confirmed": True}})
            assert resumed.status_code == 200
            after = (await http.get("/agents/assistant/suspended-runs", params={"resourceId": "u-1"})).json()
            assert after == {"runs": [], "total": 0}, n
            assert (await http.get("/inbox")).json()["items"] == []


async def test_the_inbox_pages_waiting_runs_from_the_store(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        started = [
            (await http.post("/agents/assistant/generate", json={"messages": "delete"})).json() for _ in range(3)
        ]
        assert all(run["finishReason"] == "suspended" for run in started)
        first = (await http.get("/inbox", params={"perPage": 2})).json()
        second = (await http.get("/inbox", params={"perPage": 2, "cursor": first["nextCursor"]})).json()
        assert (first["total"], len(first["items"]), len(second["items"]), second["nextCursor"]) == (3, 2, 1, None)
        newest_first = [run["runId"] for run in reversed(started)]
        assert [item["runId"] for item in first["items"] + second["items"]] == newest_first
        assert all(item["kind"] == "approval" for item in first["items"])
        assert (await http.get("/inbox", params={"agent": "nobody"})).json() == {
            "items": [],
            "total": 0,
            "nextCursor": None,
        }
        bad = await http.get("/inbox", params={"cursor": page_cursor(b"skip:x")})
        assert bad.status_code == 400
        listing = (await http.get("/agents/assistant/suspended-runs", params={"perPage": 1, "page": 2})).json()
        assert listing["total"] == 3 and [run["runId"] for run in listing["runs"]] == [started[0]["runId"]]
