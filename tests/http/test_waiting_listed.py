"""Waiting calls are listed the moment they wait: ``GET /agents/:id/suspended-runs`` and ``GET /inbox`` read the
store, which records a wait in the transaction that journals its chunk and drops it with the accepted answer."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import psycopg
import pytest

from tempo_agents.server.run_views import page_cursor
from tempo_agents.store import Store
from tempo_agents.store.sqlite import SQLiteStore
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent, served, sse_chunks

ROUNDS = 100


@pytest.mark.timeout(600)  # a hundred runs one after another: ~30 s idle, over 120 s at a load average of 20
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
            inbox = (
                await http.get("/inbox", params={"agent": "assistant", "thread": f"t-{n}", "resource": "u-1"})
            ).json()
            assert [item["runId"] for item in inbox["items"]] == [run_id], n
            assert inbox["items"][0]["kind"] == "input" and inbox["total"] == 1
            assert (await http.get("/inbox", params={"thread": f"t-{n + 1}"})).json()["total"] == 0

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
        pages = [await app.list_suspended_runs(limit=2, offset=offset) for offset in (0, 2, 4)]
        assert [page.total for page in pages] == [3, 3, 3]
        assert [[run.run_id for run in page.runs] for page in pages] == [newest_first[:2], newest_first[2:], []]
        with pytest.raises(ValueError, match="limit must be at least 1"):
            await app.list_suspended_runs(limit=0)
        with pytest.raises(ValueError, match="offset must not be negative"):
            await app.list_suspended_runs(offset=-1)


async def test_a_terminated_run_leaves_the_listings(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        run_id = (await http.post("/agents/assistant/generate", json={"messages": "charge 990"})).json()["runId"]
        assert [run.run_id for run in (await app.list_suspended_runs()).runs] == [run_id]
        await app.client.get_workflow_handle(run_id).terminate("by an operator")  # no chunk says it ended
        for _ in range(200):  # visibility reports the close a moment later
            if not (await app.list_suspended_runs()).runs:
                break
            await asyncio.sleep(0.05)
        assert (await app.list_suspended_runs()).runs == []
        assert (await app.store.waiting_runs(app.task_queue)).runs == []  # and the store forgot it
        assert (await http.get("/inbox")).json()["items"] == []


def _upgrade_now(store: Store) -> None:
    """As if the store began keeping waits only now: a store upgraded while its runs waited."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as db:
            db.execute("UPDATE store_facts SET value = ? WHERE name = 'waiting_calls_since'", (str(time.time()),))
    else:
        with psycopg.connect(store.url, autocommit=True) as conn:
            conn.execute("UPDATE tempo_agents.store_facts SET value = %s", (str(time.time()),))


async def test_runs_that_waited_before_the_store_kept_waits_are_found_through_visibility(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        run_id = (await http.post("/agents/assistant/generate", json={"messages": "delete"})).json()["runId"]
        [call] = (await app.store.waiting_runs(app.task_queue)).runs[0]
        await app.store.forget_waiting(run_id, call.tool_call_id, 0)
        for _ in range(300):  # the upgrade comes after the workflow took the suspension in
            if await app.pending(run_id):
                break
            await asyncio.sleep(0.05)
        await asyncio.to_thread(_upgrade_now, app.store)
        for _ in range(300):  # visibility follows the run a moment later
            listing = (await http.get("/agents/assistant/suspended-runs")).json()
            if listing["runs"]:
                break
            await asyncio.sleep(0.05)
        assert [run["runId"] for run in listing["runs"]] == [run_id]
        assert listing["runs"][0]["toolCalls"][0]["requiresApproval"] is True
        inbox = (await http.get("/inbox")).json()
        assert [item["runId"] for item in inbox["items"]] == [run_id] and inbox["total"] == 1
