"""``tempo-agents api schedule`` against a served API, as subprocesses: create with run options, update in place,
backfill, and two processes triggering an ``allow_all`` schedule at once (both ready before either sends), each
answer naming a run of its own."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from temporalio.client import Client

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tests.conftest import AppFactory, running_worker
from tests.support.cli_processes import run_cli
from tests.support.http_api import served
from tests.support.scheduled_runs import QUIET_EVERY, closed_scheduled_runs


async def test_the_api_schedule_commands(make_app: AppFactory, client: Client, tmp_path: Path) -> None:
    app = make_app([Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))])
    schedule_id = f"api-{app.task_queue}"
    async with running_worker(app), served(app) as http:
        url = str(http.base_url)

        async def api(*args: str) -> dict[str, object]:
            result = await asyncio.to_thread(run_cli, ["api", "--url", url, "schedule", *args], tmp_path)
            assert result.returncode == 0, result.stderr
            data: dict[str, object] = json.loads(result.stdout)["data"]
            return data

        created = await api(
            "create", "reporter", "Anything new?", "--every", QUIET_EVERY, "--id", schedule_id,
            "--overlap", "allow_all",
            "--with", '{"maxSteps": 4, "budget": {"run": {"tokens": 20000}}, "thread": "ops", "resource": "team-a"}',
        )  # fmt: skip
        options = created["options"]
        assert isinstance(options, dict)
        assert (options["maxSteps"], options["budget"]["run"]["tokens"]) == (4, 20000)

        updated = await api("update", schedule_id, '{"cron": "0 9 * * 1-5", "maxSteps": null, "note": "weekdays"}')
        assert (updated["cron"], updated["note"]) == (["0 9 * * 1-5"], "weekdays")
        assert "maxSteps" not in (updated["options"] or {})  # type: ignore[operator]

        refused = await asyncio.to_thread(
            run_cli, ["api", "--url", url, "schedule", "update", schedule_id, '{"maxSteps": true}'], tmp_path
        )
        assert refused.returncode == 1
        assert json.loads(refused.stderr)["error"]["details"]["body"]["issues"][0]["field"] == "maxSteps"

        # Two processes, each stopped just before its request until both are there.
        go = tmp_path / "go"
        launcher = (
            "import pathlib, sys, time\n"
            "from tempo_agents.cli.api.client import ApiClient\n"
            "from tempo_agents.cli.main import main\n"
            "send = ApiClient.request\n"
            "async def when_both_ready(self, *args, **kwargs):\n"
            "    print('ready', file=sys.stderr, flush=True)\n"
            f"    while not pathlib.Path({str(go)!r}).exists():\n"
            "        time.sleep(0.001)\n"
            "    return await send(self, *args, **kwargs)\n"
            "ApiClient.request = when_both_ready\n"
            "main(sys.argv[1:])\n"
        )
        processes = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                launcher,
                "api",
                "--url",
                url,
                "schedule",
                "trigger",
                schedule_id,
                cwd=tmp_path,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            for _ in range(2)
        ]
        for process in processes:
            assert process.stderr is not None
            assert (await asyncio.wait_for(process.stderr.readline(), 120)).decode().strip() == "ready"
        go.touch()
        outputs = [await asyncio.wait_for(process.communicate(), 120) for process in processes]
        assert [process.returncode for process in processes] == [0, 0], [err.decode() for _, err in outputs]
        answers = [json.loads(out)["data"] for out, _ in outputs]
        assert all(answer["started"] is True for answer in answers)
        run_ids = [answer["runId"] for answer in answers]
        assert len(set(run_ids)) == 2 and all(re.search(r"Z-[0-9a-f]{8}$", run_id) for run_id in run_ids)
        assert sorted(await closed_scheduled_runs(client, schedule_id, 2)) == sorted(run_ids)

        filled = await api("backfill", schedule_id, "--start", "2026-11-02T00:00:00Z", "--end", "2026-11-03T23:59:59Z")
        assert filled["backfilled"] is True
        runs = await closed_scheduled_runs(client, schedule_id, 4)
        assert f"{schedule_id}-2026-11-02T09:00:00Z" in runs and f"{schedule_id}-2026-11-03T09:00:00Z" in runs
        shown = await api("show", schedule_id)
        assert shown["runsStarted"] == 4
        assert (await api("delete", schedule_id))["deleted"] is True
