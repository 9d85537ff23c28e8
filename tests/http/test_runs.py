"""Our operations routes: runs from visibility, a run's queries, answering and cancelling it."""

from __future__ import annotations

import asyncio
import json

from tempo_agents import Agent, ScriptedResponse
from tempo_agents.tools.transform import TransformContext
from tests.conftest import AppFactory, running_worker
from tests.support.gated_models import PausingModel
from tests.support.http_api import parity_agent, served, sse_blocks
from tests.support.polling import until


def masked(context: TransformContext) -> dict[str, str]:
    return {"amount": "***"}


async def test_list_show_resume_and_follow(make_app: AppFactory) -> None:
    agent = parity_agent(id="masked", transform={"display": {"suspend": masked}})
    app = make_app([agent])
    async with served(app) as http, running_worker(app):
        started = await http.post(
            "/agents/masked/generate",
            json={"messages": "charge", "memory": {"thread": "t-1", "resource": "u-1"}},
        )
        run_id = started.json()["runId"]
        assert started.json()["suspendPayload"]["suspendPayload"] == {"amount": "***"}

        listing = (await http.get("/runs", params={"status": "suspended", "agent": "masked"})).json()
        for _ in range(300):  # visibility is eventually consistent (up to seconds on a loaded machine)
            if listing["runs"]:
                break
            await asyncio.sleep(0.05)
            listing = (await http.get("/runs", params={"status": "suspended", "agent": "masked"})).json()
        assert [r["runId"] for r in listing["runs"]] == [run_id] and listing["total"] == 1
        entry = listing["runs"][0]
        assert (entry["status"], entry["threadId"], entry["resourceId"]) == ("suspended", "t-1", "u-1")
        assert (await http.get("/runs", params={"thread": "t-other"})).json()["runs"] == []
        bad = await http.get("/runs", params={"status": "sleeping"})
        assert bad.status_code == 400

        detail = (await http.get(f"/runs/{run_id}")).json()
        assert detail["status"] == "suspended" and detail["agentId"] == "masked"
        assert detail["step"] == 1 and detail["usage"]["totalTokens"] == 15 and detail["tasks"] == []
        assert detail["startedAt"].endswith("Z") and detail["closedAt"] is None
        [pending] = detail["pending"]
        assert pending["toolCallId"] == "call-c1" and pending["suspendPayload"] == {"amount": "***"}
        assert json.loads(pending["resumeSchema"])["required"] == ["confirmed"]
        assert (await http.get(f"/runs/{run_id}/tasks")).json() == []

        invalid = await http.post(f"/runs/{run_id}/resume", json={"resumeData": {"confirmed": 3}})
        assert invalid.status_code == 422 and invalid.json()["validationErrors"]
        accepted = (await http.post(f"/runs/{run_id}/resume", json={"resumeData": {"confirmed": False}})).json()
        assert accepted["accepted"] is True
        follow = await http.get(f"/runs/{run_id}/stream", params={"offset": accepted["offset"]})
        blocks = [b for b in sse_blocks(follow.content) if not b.startswith(":")]
        opening, first = (json.loads(block.split("\n")[1][6:]) for block in blocks[:2])
        assert opening["type"] == "start"  # the journal's view: every segment opens with start
        assert first["type"] == "tool-result" and first["payload"]["result"] == {"charged": 0}
        assert blocks[-1] == "data: [DONE]"

        for _ in range(100):  # the run is completed once its journal says so, closed a moment later
            done = (await http.get(f"/runs/{run_id}")).json()
            if done["status"] == "completed" and done["closedAt"] is not None:
                break
            await asyncio.sleep(0.05)
        assert done["status"] == "completed" and done["closedAt"] is not None and done["pending"] == []
        missing = await http.get("/runs/nope")
        assert (missing.status_code, missing.json()) == (404, {"error": 'no run "nope" exists'})


async def test_pagination_approve_decline_and_cancel(make_app: AppFactory) -> None:
    app = make_app([parity_agent(id=f"pager-{id(make_app)}")])
    agent_id = app.agents[0].id
    async with served(app) as http, running_worker(app):
        runs = [
            (await http.post(f"/agents/{agent_id}/generate", json={"messages": "delete"})).json()["runId"]
            for _ in range(3)
        ]
        for _ in range(100):
            if (await http.get("/runs", params={"agent": agent_id})).json()["total"] == 3:
                break
            await asyncio.sleep(0.05)
        first = (await http.get("/runs", params={"agent": agent_id, "perPage": 2})).json()
        assert len(first["runs"]) == 2 and first["total"] == 3 and first["nextCursor"]
        second = (
            await http.get("/runs", params={"agent": agent_id, "perPage": 2, "cursor": first["nextCursor"]})
        ).json()
        assert {r["runId"] for r in first["runs"] + second["runs"]} == set(runs)

        approved = await http.post(f"/runs/{runs[0]}/approve", json={})
        assert approved.status_code == 200
        declined = await http.post(f"/runs/{runs[1]}/decline", json={"reason": "no"})
        assert declined.status_code == 200
        cancelled = await http.post(f"/runs/{runs[2]}/cancel")
        assert cancelled.status_code == 202
        for _ in range(100):
            if (await http.get(f"/runs/{runs[2]}")).json()["status"] == "cancelled":
                break
            await asyncio.sleep(0.05)
        assert (await http.get(f"/runs/{runs[2]}")).json()["status"] == "cancelled"
        assert (await http.post(f"/runs/{runs[2]}/cancel")).status_code == 409
        assert (await http.post(f"/runs/{runs[0]}/approve", json={})).status_code == 200  # the same request again
        assert (await http.post(f"/runs/{runs[0]}/decline", json={})).status_code == 409
        assert (await http.post("/runs/nope/cancel")).status_code == 404


async def test_a_cancel_that_meets_the_run_just_closed_is_a_409(make_app: AppFactory) -> None:
    """The route finds the run running, and the run completes before the cancel reaches Temporal (forced: the run
    is held mid-stream and let go, and closes, between the two): the answer is that it is not running, not a 500."""
    model = PausingModel([ScriptedResponse(text="one two three")], pause_after=1)
    app = make_app([Agent(id="talker", model=model)])
    cancel_run = app.cancel_run

    async def after_the_run_closed(run_id: str) -> None:
        model.gate.set()
        await app.client.get_workflow_handle(run_id).result()
        await cancel_run(run_id)

    app.cancel_run = after_the_run_closed  # type: ignore[method-assign]
    async with served(app) as http, running_worker(app):
        started = await app.stream("talker", "talk")
        await until(lambda: app.store.read_chunks(started.run_id))  # under way, held after its first word
        refused = await http.post(f"/runs/{started.run_id}/cancel")
        assert refused.status_code == 409, refused.text
        assert refused.json() == {"error": f'run "{started.run_id}" is not running'}
        assert (await http.get(f"/runs/{started.run_id}")).json()["status"] == "completed"
        await started.aclose()
