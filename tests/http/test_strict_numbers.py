"""Wherever the API takes a whole number, it takes a JSON integer only: ``true`` (which pydantic's lax mode reads as
1), ``"1"`` and ``1.5`` are a 400 naming the field, and nothing is started."""

from __future__ import annotations

from typing import Any

import httpx
from temporalio.client import Client

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tests.conftest import AppFactory, closed_history, running_worker
from tests.support.http_api import served

NOT_WHOLE: list[Any] = [True, False, "1", 1.5, "two"]


async def workflows_on(client: Client, task_queue: str) -> int:
    return len([execution async for execution in client.list_workflows(f"TaskQueue = '{task_queue}'")])


def refused(answer: httpx.Response, field: str) -> None:
    assert answer.status_code == 400, (field, answer.text)
    assert any(issue["field"].startswith(field) for issue in answer.json()["issues"]), (field, answer.text)


async def test_booleans_strings_and_fractions_are_no_whole_numbers(make_app: AppFactory, client: Client) -> None:
    model = ScriptedModel([ScriptedResponse(text="first"), ScriptedResponse(text="second")])
    app = make_app([Agent(id="clerk", model=model)])
    async with running_worker(app), served(app) as http:
        origin = await app.generate("clerk", "hello")
        await closed_history(client, origin.run_id)
        before = await workflows_on(client, app.task_queue)
        for value in NOT_WHOLE:
            refused(await http.post(f"/runs/{origin.run_id}/fork", json={"atStep": value}), "atStep")
            refused(await http.post(f"/runs/{origin.run_id}/fork", json={"maxSteps": value}), "maxSteps")
            refused(await http.post("/agents/clerk/generate", json={"messages": "x", "maxSteps": value}), "maxSteps")
            refused(await http.post("/agents/clerk/stream", json={"messages": "x", "maxSteps": value}), "maxSteps")
            refused(await http.post("/agents/clerk/observe", json={"runId": origin.run_id, "offset": value}), "offset")
            budget = {"run": {"tokens": value}}
            refused(await http.post("/agents/clerk/generate", json={"messages": "x", "budget": budget}), "run.tokens")
            settings = {"maxTokens": value}
            answer = await http.post("/agents/clerk/generate", json={"messages": "x", "modelSettings": settings})
            refused(answer, "modelSettings.maxTokens")
            fork_settings = {"modelSettings": settings}
            refused(await http.post(f"/runs/{origin.run_id}/fork", json=fork_settings), "modelSettings.maxTokens")
            schedule = {"agentId": "clerk", "message": "x", "every": "1h", "maxSteps": value}
            refused(await http.post("/schedules", json=schedule), "maxSteps")
        refused(await http.post("/agents/clerk/generate", json={"messages": "x", "budget": {"run": {"costUsd": True}}}),
                "run.costUsd")  # fmt: skip
        assert await workflows_on(client, app.task_queue) == before
        # Integers still are.
        fork = await http.post(f"/runs/{origin.run_id}/fork", json={"atStep": 1, "maxSteps": 2})
        assert fork.status_code == 201, fork.text
