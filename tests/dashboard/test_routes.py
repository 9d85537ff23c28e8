"""The dashboard's own routes over HTTP: the inbox's pages, answers and their refusals, the runs table, the timeline
(parallel calls in lanes, waits for people), and what is open without a token."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import httpx

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tests.conftest import AppFactory, running_worker
from tests.support.browser import TOKENS, dashboard_server, desk_agent
from tests.support.polling import until

ALICE = {"Authorization": "Bearer tok-alice"}


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_inbox_pages_answers_and_the_second_answer(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server:
        runs = [(await app.agent("desk").generate(m)).run_id for m in ("question", "ship", "delete a.txt")]
        async with httpx.AsyncClient(base_url=server.url, headers=ALICE, timeout=30) as http:

            async def all_waiting() -> bool:
                total: int = (await http.get("/api/inbox")).json()["total"]
                return total == 3

            await until(all_waiting)
            first = (await http.get("/api/inbox", params={"perPage": 2})).json()
            second = (await http.get("/api/inbox", params={"perPage": 2, "cursor": first["nextCursor"]})).json()
            items = first["items"] + second["items"]
            assert sorted(i["runId"] for i in items) == sorted(runs) and second["nextCursor"] is None
            kinds = {i["toolName"]: i["kind"] for i in items}
            assert kinds == {"ask_user": "question", "ship_order": "input", "delete_file": "approval"}
            ship = next(i for i in items if i["toolName"] == "ship_order")
            assert ship["suspendPayload"]["order"] == "A-1042" and ship["expiresAt"] and ship["resumeSchema"]

            refused = await http.post(
                "/api/inbox/answer", json={"runId": ship["runId"], "resumeData": {"carrier": "boat"}}
            )
            assert refused.status_code == 422
            fields = refused.json()["validationErrors"]["fields"]
            assert "carrier" in fields and "address" in fields  # beside the fields the form shows

            question = next(i for i in items if i["kind"] == "question")
            body = {"runId": question["runId"], "toolCallId": question["toolCallId"], "resumeData": "Oslo"}
            accepted = await http.post("/api/inbox/answer", json=body)
            assert accepted.status_code == 200 and accepted.json()["answeredBy"] == "alice"
            late = await http.post(
                "/api/inbox/answer", json={**body, "resumeData": "Rome"}, headers={"Authorization": "Bearer tok-bob"}
            )
            assert late.status_code == 409
            first_answer = late.json().pop("answer")
            assert first_answer["answeredBy"] == "alice" and first_answer["data"] == "Oslo"
            assert {key: value for key, value in late.json().items() if key != "answer"} == {
                "error": "already answered by alice",
                "code": "ALREADY_ANSWERED",
                "answeredBy": "alice",
            }

            assert (await http.get("/", headers={"Authorization": ""})).status_code == 200  # the page: open
            assert (await http.get("/dashboard/assets/app.js", headers={"Authorization": ""})).status_code == 200
            assert (await http.get("/api/inbox", headers={"Authorization": ""})).status_code == 401  # data: not
            session = (await http.get("/api/dashboard/session")).json()
            assert session == {"principal": "alice", "temporalUiUrl": "http://127.0.0.1:8233", "namespace": "default"}


async def test_timeline_shows_parallel_calls_in_lanes_and_waits_for_people(make_app: AppFactory) -> None:
    async def slow(data: dict[str, Any], ctx: ToolContext) -> str:
        await asyncio.sleep(0.5)
        return str(data)

    async def confirm(data: dict[str, Any], ctx: ToolContext) -> Any:
        assert ctx.suspend is not None
        if ctx.resume_data is None:
            return await ctx.suspend({"ok?": True})
        return ctx.resume_data

    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("slow", {"n": 1}), ScriptedToolCall("slow", {"n": 2})]),
            ScriptedResponse(tool_calls=[ScriptedToolCall("confirm", {})]),
            ScriptedResponse(text="done"),
        ]
    )
    tools = {
        "slow": create_tool(id="slow", description="Slow", execute=slow),
        "confirm": create_tool(id="confirm", description="Asks", execute=confirm),
    }
    app = make_app([Agent(id="timed", model=model, tools=tools)])
    async with running_worker(app), dashboard_server(app) as server:
        first = await app.agent("timed").generate("go")
        await asyncio.sleep(0.6)  # the person takes a moment
        resumed = await app.agent("timed").resume_generate("yes", run_id=first.run_id)
        assert resumed.text == "done"
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:

            async def closed() -> dict[str, Any] | None:
                found: dict[str, Any] = (await http.get(f"/api/runs/{first.run_id}/timeline")).json()
                return found if found["endedAt"] else None

            timeline = await until(closed)
            listed = (await http.get("/api/dashboard/runs", params={"search": first.run_id})).json()
        tools_bars = [bar for bar in timeline["bars"] if bar["label"] == "slow"]
        assert len(tools_bars) == 2 and {bar["lane"] for bar in tools_bars} == {0, 1}  # side by side
        first, second = sorted(tools_bars, key=lambda bar: moment(bar["start"]))
        assert moment(second["start"]) < moment(first["end"])  # the two calls ran at the same time
        assert [bar["label"] for bar in timeline["bars"] if bar["kind"] == "model"] == [
            "model step 0", "model step 1", "model step 2"
        ]  # fmt: skip
        assert [bar["label"] for bar in timeline["bars"] if bar["kind"] == "tool"].count("confirm") == 2
        [wait] = timeline["waits"]
        assert wait["seconds"] >= 0.5 and timeline["lanes"] == 2
        [row] = listed["runs"]
        assert (row["status"], row["steps"], row["waitingFor"]) == ("completed", 3, [])
