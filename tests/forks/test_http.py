"""Forks over HTTP and the CLI: ``POST /api/runs/{runId}/fork`` and ``/retry``, ``GET /api/runs/compare``, a run's
origin and forks in its detail, ``tempo-agents api run fork`` and ``compare``."""

from __future__ import annotations

import asyncio
import collections
import json
from typing import Any

import httpx
from temporalio.client import Client

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, closed_history, running_worker
from tests.support.cli_processes import cli
from tests.support.fork_agents import call, lookup_tool, travel_agents
from tests.support.http_api import served


async def forks_of(http: httpx.AsyncClient, run_id: str, expected: int) -> list[str]:
    """The run's forks once visibility has indexed ``expected`` of them (it is eventually consistent)."""
    async with asyncio.timeout(60):
        while True:
            listed: list[str] = (await http.get(f"/runs/{run_id}/forks")).json()["forks"]
            if len(listed) >= expected:
                return listed
            await asyncio.sleep(0.2)


async def test_fork_compare_and_lineage_over_http_and_the_cli(make_app: AppFactory, client: Client) -> None:
    executed: collections.Counter[str] = collections.Counter()
    app = make_app(travel_agents(executed))
    async with served(app) as http, running_worker(app):
        original = await app.generate("travel", "Weather?")
        await closed_history(client, original.run_id)

        answer = await http.post(
            f"/runs/{original.run_id}/fork",
            json={"atStep": 1, "agentId": "travel-v2", "reuse": "tools", "messages": "Try Oslo"},
        )
        assert answer.status_code == 201, answer.text
        forked = answer.json()
        assert forked["forkOf"] == {"runId": original.run_id, "step": 1}
        fork_result = await app.attach(forked["runId"], follow="run").result()
        assert fork_result.text == "And Oslo.Snow in Oslo."
        await closed_history(client, forked["runId"])

        compared = (await http.get("/runs/compare", params={"a": original.run_id, "b": forked["runId"]})).json()
        assert compared["firstDifferentStep"] == 1
        assert [s["same"] for s in compared["steps"]] == [True, False, False]
        step = compared["steps"][1]
        assert step["b"]["prompt"] == [{"role": "user", "text": "Try Oslo"}]
        (diff,) = step["toolCalls"]
        assert diff["sameTool"] and not diff["sameArgs"] and diff["changedArgs"] == ["city"]
        assert diff["a"]["args"] == {"city": "Rome"} and diff["b"]["args"] == {"city": "Oslo"}
        assert diff["b"]["result"] == {"city": "Oslo", "sky": "snow"}
        assert compared["b"]["forkOf"] == {"runId": original.run_id, "step": 1}
        assert compared["a"]["forkOf"] is None
        assert compared["a"]["steps"] == 3 and compared["b"]["steps"] == 3  # the fork's copied step 0 counts
        assert compared["a"]["durationMs"] >= 0 and compared["b"]["durationMs"] >= 0
        assert compared["a"]["usage"] is not None

        detail = (await http.get(f"/runs/{forked['runId']}")).json()
        assert detail["forkOf"] == {"runId": original.run_id, "step": 1}
        assert await forks_of(http, original.run_id, 1) == [forked["runId"]]

        refused = await http.post(f"/runs/{original.run_id}/fork", json={"atStep": 9})
        assert refused.status_code == 400
        assert refused.json()["error"] == f'run "{original.run_id}" has 3 model step(s): fork at a step from 0 to 3'
        assert (await http.post("/runs/no-such-run/fork", json={})).status_code == 404
        bad = await http.post(f"/runs/{original.run_id}/fork", json={"messages": [42]})
        assert bad.status_code == 400 and bad.json()["issues"] == [{"field": "messages", "message": "Invalid input"}]
        bad_memory = await http.post(f"/runs/{original.run_id}/fork", json={"memory": {"thread": 1}})
        assert bad_memory.status_code == 400, bad_memory.text
        assert bad_memory.json()["issues"][0]["field"].startswith("memory")

        url = str(http.base_url)
        code, out, err = await cli("api", "--url", url, "run", "fork", original.run_id, "--at-step", "2",
                                   "--message", "Thanks!")  # fmt: skip
        assert code == 0, err
        cli_fork: dict[str, Any] = json.loads(out)["data"]
        assert cli_fork["forkOf"] == {"runId": original.run_id, "step": 2}
        await app.attach(cli_fork["runId"], follow="run").result()
        await closed_history(client, cli_fork["runId"])
        code, out, err = await cli("api", "--url", url, "run", "compare", original.run_id, cli_fork["runId"])
        assert code == 0, err
        assert json.loads(out)["data"]["firstDifferentStep"] == 2
        assert set(await forks_of(http, original.run_id, 2)) == {forked["runId"], cli_fork["runId"]}
    # Paris and Rome ran for the original; the HTTP fork ran only Oslo (step 0 was copied); the CLI fork's
    # model (step 2 of "travel", answered again) called nothing.
    assert executed == {"Paris": 1, "Rome": 1, "Oslo": 1}


async def test_retry_over_http_and_the_cli(make_app: AppFactory, client: Client) -> None:
    """``POST /api/runs/{runId}/retry`` and ``tempo-agents api run retry``: each a fork at the failed run's last good
    step, linked to it, that finishes after the fix without running step 0's tool again."""
    executed: collections.Counter[str] = collections.Counter()
    fixed: list[bool] = []

    def respond(request: ModelRequest) -> ScriptedResponse:
        if not any(m.role == "assistant" for m in request.messages):
            return ScriptedResponse(tool_calls=[call("Paris", "c1")])
        if not fixed:
            raise ConfigurationError("the prompt template is broken")
        return ScriptedResponse(text="Paris is clear.")

    app = make_app([Agent(id="travel", model=ScriptedModel(respond), tools={"lookup": lookup_tool(executed)})])
    async with served(app) as http, running_worker(app):
        failed = await app.generate("travel", "Weather in Paris?")
        assert failed.error is not None
        fixed.append(True)
        answer = await http.post(f"/runs/{failed.run_id}/retry")
        assert answer.status_code == 201, answer.text
        assert answer.json()["forkOf"] == {"runId": failed.run_id, "step": 1}
        assert (await app.attach(answer.json()["runId"], follow="run").result()).text == "Paris is clear."
        code, out, err = await cli("api", "--url", str(http.base_url), "run", "retry", failed.run_id)
        assert code == 0, err
        retried = json.loads(out)["data"]
        assert retried["forkOf"] == {"runId": failed.run_id, "step": 1}
        assert (await app.attach(retried["runId"], follow="run").result()).text == "Paris is clear."
        await closed_history(client, retried["runId"])
    assert executed == {"Paris": 1}


async def test_a_fork_of_a_fork_numbers_its_steps_as_the_conversation_does(
    make_app: AppFactory, client: Client
) -> None:
    """Steps are numbered in the conversation, from 0, a fork's copied steps counted: a fork at step 1 asks step 1
    again and its own steps are 1 and 2, so a fork of it at step 2 is at step 2 in its answer, its detail, compare
    and the CLI alike."""
    app = make_app(travel_agents(collections.Counter()))
    async with served(app) as http, running_worker(app):
        original = await app.generate("travel", "Weather?")
        first = await http.post(f"/runs/{original.run_id}/fork", json={"atStep": 1, "agentId": "travel-v2"})
        assert first.status_code == 201, first.text
        fork = first.json()["runId"]
        await app.attach(fork, follow="run").result()
        await closed_history(client, fork)

        second = await http.post(f"/runs/{fork}/fork", json={"atStep": 2, "messages": "Thanks!"})
        assert second.status_code == 201, second.text
        assert second.json()["forkOf"] == {"runId": fork, "step": 2}
        fork_of_fork = second.json()["runId"]
        await app.attach(fork_of_fork, follow="run").result()
        await closed_history(client, fork_of_fork)

        compared = (await http.get("/runs/compare", params={"a": fork, "b": fork_of_fork})).json()
        assert compared["firstDifferentStep"] == 2
        assert [s["same"] for s in compared["steps"]] == [True, True, False]
        assert compared["steps"][2]["b"]["prompt"] == [{"role": "user", "text": "Thanks!"}]
        assert (compared["a"]["steps"], compared["b"]["steps"]) == (3, 3)  # the copied steps counted
        assert compared["b"]["forkOf"] == {"runId": fork, "step": 2}
        with_origin = (await http.get("/runs/compare", params={"a": original.run_id, "b": fork})).json()
        assert (with_origin["firstDifferentStep"], with_origin["b"]["forkOf"]["step"]) == (1, 1)

        detail = (await http.get(f"/runs/{fork_of_fork}")).json()
        assert (detail["forkOf"], detail["step"]) == ({"runId": fork, "step": 2}, 3)
        assert (await http.get(f"/runs/{fork}")).json()["step"] == 3

        copied = await http.post(f"/runs/{fork}/fork", json={"atStep": 0})
        assert (copied.status_code, copied.json()["error"]) == (
            400,
            f'step 0 of run "{fork}" was copied from run "{original.run_id}": fork that run at step 0, or this one '
            "at step 1 or later",
        )
        past = await http.post(f"/runs/{fork}/fork", json={"atStep": 4})
        assert (past.status_code, past.json()["error"]) == (
            400,
            f'run "{fork}" has 3 model step(s) (step 0 was copied from its origin): fork at a step from 1 to 3',
        )

        url = str(http.base_url)
        code, out, err = await cli("api", "--url", url, "run", "fork", fork, "--at-step", "2", "--message", "Bye!")
        assert code == 0, err
        by_cli = json.loads(out)["data"]
        assert by_cli["forkOf"] == {"runId": fork, "step": 2}
        await app.attach(by_cli["runId"], follow="run").result()
        await closed_history(client, by_cli["runId"])
        code, out, err = await cli("api", "--url", url, "run", "compare", fork, by_cli["runId"])
        assert code == 0, err
        assert json.loads(out)["data"]["firstDifferentStep"] == 2
        code, out, err = await cli("api", "--url", url, "run", "show", by_cli["runId"])
        assert code == 0, err
        assert json.loads(out)["data"]["forkOf"]["step"] == 2 and json.loads(out)["data"]["step"] == 3
