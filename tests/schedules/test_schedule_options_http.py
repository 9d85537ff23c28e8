"""Run options, update and backfill of schedules over HTTP: every run option ``App.schedule`` takes is a field (its
runs keep to it), numbers are strict, a schedule is changed in place (its recent runs stay, the ``temporal`` CLI
sees the new spec) and a past period is backfilled, one run per due time."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool
from tempo_agents.models.messages import TextPart
from tempo_agents.models.model import ModelRequest
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served
from tests.support.scheduled_runs import QUIET_EVERY, closed_scheduled_runs

STEP = Usage(input_tokens=60, output_tokens=40, total_tokens=100)


async def lookup(data: dict[str, Any]) -> str:
    return "found"


def spender() -> Agent:
    responses = [ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"n": n})], usage=STEP) for n in range(3)]
    model = ScriptedModel([*responses, ScriptedResponse(text="Done.", usage=STEP)])
    tool = create_tool(id="lookup", description="Looks up", execute=lookup)
    return Agent(id="spender", model=model, tools={"lookup": tool})


def reporter() -> Agent:
    return Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))


def heard(request: ModelRequest) -> ScriptedResponse:
    said = [part.text for part in request.messages[-1].content if isinstance(part, TextPart)]
    return ScriptedResponse(text="heard: " + " ".join(said))


def echo() -> Agent:
    """Answers with the run's user message: what a schedule's runs are asked shows in their answers."""
    return Agent(id="reporter", model=ScriptedModel(heard))


async def test_every_run_option_over_http_and_the_runs_keep_to_it(make_app: AppFactory, client: Client) -> None:
    app = make_app([spender()])
    schedule_id = f"spend-{app.task_queue}"
    body = {
        "agentId": "spender",
        "message": "spend",
        "every": QUIET_EVERY,
        "overlap": "allow_all",
        "scheduleId": schedule_id,
        "thread": "ops",
        "resource": "acme",
        "maxSteps": 8,
        "budget": {"run": {"tokens": 100}},
        "requestContext": {"tenant": "acme"},
        "modelSettings": {"temperature": 0.2},
        "activeTools": ["lookup"],
        "toolChoice": "auto",
        "requireToolApproval": False,
        "autoResumeSuspendedTools": True,
        "extraInstructions": "Be brief.",
        "remindEverySeconds": 600,
        "escalateAfterSeconds": 3600.5,
        "escalateTo": ["alice"],
    }
    async with running_worker(app), served(app) as http:
        created = await http.post("/schedules", json=body)
        assert created.status_code == 201, created.text
        options = created.json()["options"]
        assert options["budget"]["run"] == {"tokens": 100}
        assert (options["maxSteps"], options["requestContext"], options["modelSettings"]) == (
            8,
            {"tenant": "acme"},
            {"temperature": 0.2},
        )
        assert (options["activeTools"], options["extraInstructions"], options["escalateTo"]) == (
            ["lookup"],
            "Be brief.",
            ["alice"],
        )
        assert (options["remindEverySeconds"], options["escalateAfterSeconds"]) == (600, 3600.5)
        assert options["memory"] == {"thread": "ops", "resource": "acme"} and options["autoResumeSuspendedTools"]

        triggered = (await http.post(f"/schedules/{schedule_id}/trigger")).json()
        run_id = triggered["runId"]
        result = await client.get_workflow_handle(run_id, result_type=RunResult).result()
        assert result.finish_reason == "budget-exceeded"  # its budget: 100 tokens, spent by its first step
        detail = (await http.get(f"/runs/{run_id}")).json()
        assert (detail["threadId"], detail["resourceId"], detail["scheduleId"]) == ("ops", "acme", schedule_id)


async def test_schedule_bodies_are_checked_strictly(make_app: AppFactory) -> None:
    app = make_app([reporter()])
    base = {"agentId": "reporter", "message": "hi", "every": "1h"}
    async with served(app) as http:

        async def refused(extra: dict[str, Any]) -> dict[str, Any]:
            answer = await http.post("/schedules", json={**base, **extra})
            assert answer.status_code == 400, (extra, answer.text)
            found: dict[str, Any] = answer.json()
            return found

        for bad in ({"maxSteps": True}, {"maxSteps": "2"}, {"maxSteps": 1.5}, {"maxSteps": 0}):
            assert (await refused(bad))["issues"][0]["field"] == "maxSteps"
        assert (await refused({"remindEverySeconds": True}))["issues"][0]["field"].startswith("remindEverySeconds")
        assert (await refused({"paused": 1}))["issues"][0]["field"] == "paused"
        assert (await refused({"budget": {"run": {"tokens": -1}}}))["error"] == "Invalid request body"
        assert (await refused({"budget": {"runs": {}}}))["issues"][0]["field"] == "runs"
        assert (await refused({"unknown": 1}))["issues"] == [
            {"field": "unknown", "message": "Extra inputs are not permitted"}
        ]
        assert (await refused({"thread": "t"}))["error"] == "thread and resource go together: pass both or neither"
        assert (await refused({"hooks": "nope"}))["error"].startswith("no hooks")
        assert (await refused({"mode": "plan"}))["error"] == (
            'agent "reporter" declares no modes, so a run cannot start in mode "plan"'
        )
        assert (await refused({"every": "500ms"}))[
            "error"
        ] == 'a schedule runs at most once a second: every="500ms" is shorter'
        assert (await refused({"overlap": "sometimes"}))["error"].startswith('unknown overlap policy "sometimes"')
        assert (await http.get("/schedules")).json() == []  # nothing was created


async def test_update_in_place_keeps_the_runs_and_the_temporal_cli_sees_it(
    make_app: AppFactory, client: Client, temporal_env: WorkflowEnvironment
) -> None:
    app = make_app([echo()])
    schedule_id = f"edit-{app.task_queue}"
    async with running_worker(app), served(app) as http:
        created = await http.post(
            "/schedules",
            json={"agentId": "reporter", "message": "Anything new?", "every": QUIET_EVERY, "scheduleId": schedule_id},
        )
        assert created.status_code == 201, created.text
        await http.post(f"/schedules/{schedule_id}/trigger")
        first = (await closed_scheduled_runs(client, schedule_id, 1))[0]
        assert await app.attach(first).text == "heard: Anything new?"

        changed = await http.patch(
            f"/schedules/{schedule_id}",
            json={
                "cron": "30 8 * * 1-5",
                "timeZone": "Europe/Paris",
                "overlap": "allow_all",
                "note": "weekday mornings",
                "message": "What changed overnight?",
                "maxSteps": 3,
                "budget": {"run": {"tokens": 5000}},
            },
        )
        assert changed.status_code == 200, changed.text
        view = changed.json()
        assert (view["cron"], view.get("everySeconds"), view["timeZone"]) == (["30 8 * * 1-5"], [], "Europe/Paris")
        assert (view["overlap"], view["note"], view["message"]) == (
            "allow_all",
            "weekday mornings",
            "What changed overnight?",
        )
        assert (view["options"]["maxSteps"], view["options"]["budget"]["run"]) == (3, {"tokens": 5000})
        assert [run["runId"] for run in view["recentRuns"]] == [first] and view["runsStarted"] == 1
        assert view["id"] == schedule_id and view["updatedAt"]

        # Only what is named changes; null clears an option back to the agent's.
        cleared = await http.patch(f"/schedules/{schedule_id}", json={"maxSteps": None, "note": None})
        assert cleared.status_code == 200, cleared.text
        again = cleared.json()
        assert "maxSteps" not in again["options"] and again["options"]["budget"]["run"] == {"tokens": 5000}
        assert (
            "note" not in again and again["cron"] == ["30 8 * * 1-5"] and again["message"] == "What changed overnight?"
        )

        triggered = (await http.post(f"/schedules/{schedule_id}/trigger")).json()
        assert triggered["started"] is True
        assert await app.attach(triggered["runId"]).text == "heard: What changed overnight?"

        described = subprocess.run(
            [find_temporal_binary(), "schedule", "describe", "--schedule-id", schedule_id, "--output", "json",
             "--address", temporal_env.client.service_client.config.target_host],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        spec = json.loads(described.stdout)["schedule"]["spec"]
        [calendar] = spec["structuredCalendar"]
        assert (calendar["minute"], calendar["hour"], calendar["dayOfWeek"]) == (
            [{"start": 30, "end": 30, "step": 1}],
            [{"start": 8, "end": 8, "step": 1}],
            [{"start": 1, "end": 5, "step": 1}],
        )
        assert spec["timezoneName"] == "Europe/Paris" and not spec.get("interval")

        for bad, error in (
            ({"maxSteps": True}, "Invalid request body"),
            (
                {"every": "1h", "cron": "0 * * * *"},
                "a schedule needs exactly one of cron=... (e.g. '0 * * * *') or every=... ('1h')",
            ),
            ({}, "nothing to change: name at least one field"),
            ({"agentId": "other"}, "Invalid request body"),
            ({"thread": "t"}, "thread and resource go together: pass both or neither"),
        ):
            answer = await http.patch(f"/schedules/{schedule_id}", json=bad)
            assert (answer.status_code, answer.json()["error"]) == (400, error), bad
        assert (await http.patch("/schedules/nothing-here", json={"note": "x"})).status_code == 404
        unchanged = (await http.get(f"/schedules/{schedule_id}")).json()
        assert unchanged["cron"] == ["30 8 * * 1-5"] and unchanged["options"]["budget"]["run"] == {"tokens": 5000}


async def test_backfill_over_http_is_one_run_per_due_time(make_app: AppFactory, client: Client) -> None:
    app = make_app([reporter()])
    schedule_id = f"fill-{app.task_queue}"
    async with running_worker(app), served(app) as http:
        # Paused: a backfill runs all the same, and no full hour's own run joins the runs counted.
        await http.post(
            "/schedules",
            json={"agentId": "reporter", "message": "Hourly", "cron": "0 * * * *", "overlap": "allow_all",
                  "scheduleId": schedule_id, "paused": True},
        )  # fmt: skip
        start = datetime(2026, 11, 2, 8, tzinfo=UTC)
        body = {"startAt": start.isoformat(), "endAt": (start + timedelta(hours=2)).isoformat()}
        answer = await http.post(f"/schedules/{schedule_id}/backfill", json=body)
        assert answer.status_code == 202, answer.text
        assert answer.json()["backfilled"] is True
        runs = await closed_scheduled_runs(client, schedule_id, 3)
        assert sorted(runs) == [
            f"{schedule_id}-{(start + timedelta(hours=hour)).strftime('%Y-%m-%dT%H:%M:%SZ')}" for hour in range(3)
        ]
        # The same period again would start those due times again under the same names (Temporal allows it once
        # the first runs closed), and a run's name is its journal's: refused, naming them, nothing started.
        again = await http.post(f"/schedules/{schedule_id}/backfill", json=body)
        assert again.status_code == 409, again.text
        assert again.json()["error"] == (
            f"schedule {schedule_id} already has runs due in that period ({', '.join(sorted(runs))}): a backfill "
            "starts each due time once, so choose a period without them"
        )
        later = {"startAt": (start + timedelta(hours=3)).isoformat(), "endAt": (start + timedelta(hours=3)).isoformat()}
        assert (await http.post(f"/schedules/{schedule_id}/backfill", json=later)).status_code == 202
        await closed_scheduled_runs(client, schedule_id, 4)
        executions = [e.id async for e in client.list_workflows(f"TemporalScheduledById = '{schedule_id}'")]
        assert len(executions) == len(set(executions)) == 4  # every run id is one run
        for bad in (
            {"startAt": "2026-11-02T08:00:00", "endAt": body["endAt"]},  # no time zone
            {**body, "endAt": "yesterday"},
            {"startAt": body["endAt"], "endAt": body["startAt"]},
            {**body, "overlap": "sometimes"},
        ):
            assert (await http.post(f"/schedules/{schedule_id}/backfill", json=bad)).status_code == 400, bad
        missing = await http.post("/schedules/nothing-here/backfill", json=body)
        assert missing.status_code == 404
