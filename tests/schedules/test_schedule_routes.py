"""The schedule routes over HTTP: create, list, pause, trigger, delete; unknown schedules are 404s."""

from __future__ import annotations

import asyncio

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served

TOKENS = {"tok-ops": "ops"}
AUTH = {"Authorization": "Bearer tok-ops"}


async def test_schedule_routes(make_app: AppFactory) -> None:
    agent = Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))
    app = make_app([agent])
    schedule_id = f"report-{app.task_queue}"
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        body = {
            "agentId": "reporter",
            "message": "Anything new?",
            "cron": "0 9 * * 1-5",
            "timeZone": "Europe/Paris",
            "scheduleId": schedule_id,
            "thread": "ops",
            "resource": "team-a",
        }
        created = await http.post("/schedules", json=body, headers=AUTH)
        assert created.status_code == 201, created.text
        view = created.json()
        assert (view["id"], view["agentId"], view["cron"], view["timeZone"]) == (
            schedule_id,
            "reporter",
            ["0 9 * * 1-5"],
            "Europe/Paris",
        )
        assert view["overlap"] == "skip" and not view["paused"] and len(view["nextRuns"]) > 0
        assert (await http.post("/schedules", json=body, headers=AUTH)).status_code == 409
        listed = await http.get("/schedules", headers=AUTH)
        assert [item["id"] for item in listed.json()] == [schedule_id]

        paused = await http.post(f"/schedules/{schedule_id}/pause", json={"note": "audit"}, headers=AUTH)
        assert (paused.json()["paused"], paused.json()["note"]) == (True, "audit")
        triggered = await http.post(f"/schedules/{schedule_id}/trigger", headers=AUTH)  # a trigger runs when paused
        assert triggered.status_code == 202
        while not (view := (await http.get(f"/schedules/{schedule_id}", headers=AUTH)).json())["recentRuns"]:
            await asyncio.sleep(0.1)
        run_id = view["recentRuns"][0]["runId"]
        assert await app.attach(run_id).text == "all quiet"
        run = (await http.get(f"/runs/{run_id}", headers=AUTH)).json()
        assert (run["status"], run["scheduleId"]) == ("completed", schedule_id)  # shown as scheduled
        listed_runs = (await http.get("/runs", headers=AUTH)).json()["runs"]
        assert [(r["runId"], r["scheduleId"]) for r in listed_runs] == [(run_id, schedule_id)]

        assert (await http.delete(f"/schedules/{schedule_id}", headers=AUTH)).status_code == 204
        assert (await http.get(f"/schedules/{schedule_id}", headers=AUTH)).status_code == 404
        missing = await http.post("/schedules/nothing-here/trigger", headers=AUTH)
        assert (missing.status_code, missing.json()) == (404, {"error": "Schedule with id nothing-here not found"})
        bad = await http.post("/schedules", json={**body, "cron": None}, headers=AUTH)
        assert bad.status_code == 400
