"""Budgets over HTTP: a run's usage and remaining budget in its detail and at ``/budget``, and the answer to a run
that waits for a raise (``POST /api/runs/{runId}/budget``) under the token's principal."""

from __future__ import annotations

import asyncio
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served

STEP = Usage(input_tokens=60, output_tokens=40, total_tokens=100)
TOKENS = {"secret-ops": "ops"}
AUTH = {"Authorization": "Bearer secret-ops"}


async def lookup(data: dict[str, Any]) -> str:
    return "found"


def agent() -> Agent:
    responses = [ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"n": n})], usage=STEP) for n in range(3)]
    model = ScriptedModel([*responses, ScriptedResponse(text="Done.", usage=STEP)], model_id="priced")
    tool = create_tool(id="lookup", description="Looks up", execute=lookup)
    return Agent(id="spender", model=model, tools={"lookup": tool})


async def detail_when_waiting(http: Any, run_id: str) -> dict[str, Any]:
    for _ in range(500):
        detail: dict[str, Any] = (await http.get(f"/runs/{run_id}", headers=AUTH)).json()
        if detail["budget"] and detail["budget"].get("waiting"):
            return detail
        await asyncio.sleep(0.02)
    raise AssertionError(f"run {run_id} never showed its budget wait")


async def test_a_run_waiting_for_its_budget_is_shown_and_answered_over_http(make_app: AppFactory) -> None:
    app = make_app([agent()], prices={"scripted/priced": {"input": 2.5, "output": 10.0}})
    body = {
        "messages": "spend",
        "memory": {"thread": "t", "resource": "acme"},
        "budget": {"run": {"tokens": 200}, "resource": {"month": {"costUsd": 1}}, "onExceeded": "wait"},
    }
    async with served(app, tokens=TOKENS) as http, running_worker(app):
        started = await http.post("/agents/spender/generate", json=body, headers=AUTH)
        assert started.status_code == 200, started.text
        run_id = started.json()["runId"]
        detail = await detail_when_waiting(http, run_id)
        usage = (await http.get(f"/runs/{run_id}/budget", headers=AUTH)).json()
        refused = await http.post(f"/runs/{run_id}/budget", json={"action": "raise"}, headers=AUTH)
        bad = await http.post(
            f"/runs/{run_id}/budget", json={"action": "raise", "budget": {"run": {"tokens": -1}}}, headers=AUTH
        )
        raised = await http.post(
            f"/runs/{run_id}/budget", json={"action": "raise", "budget": {"run": {"tokens": 1000}}}, headers=AUTH
        )
        assert raised.status_code == 200, raised.text
        await app.client.get_workflow_handle(run_id).result()
        again = await http.post(f"/runs/{run_id}/budget", json={"action": "end"}, headers=AUTH)
        closed = (await http.get(f"/runs/{run_id}", headers=AUTH)).json()

    budget = detail["budget"]
    assert budget["waiting"]["stop"]["scope"] == "run" and budget["waiting"]["stop"]["used"] == 200
    run_counter = next(c for c in budget["counters"] if c["scope"] == "run")
    assert run_counter == {
        "scope": "run",
        "period": "total",
        "periodKey": "total",
        "tokens": 200,
        "costUsd": 0.0011,
        "limitTokens": 200,
        "remainingTokens": 0,
    }
    month = next(c for c in budget["counters"] if c["scope"] == "resource" and c["period"] == "month")
    assert month["limitCostUsd"] == 1 and month["remainingCostUsd"] == 1 - 0.0011
    assert usage["counters"] == budget["counters"]
    assert refused.status_code == 400 and refused.json()["issues"][0]["field"] == "budget"
    assert bad.status_code == 400 and bad.json()["issues"][0]["field"].startswith("budget.run.tokens")
    assert raised.json()["accepted"] is True and isinstance(raised.json()["offset"], int)
    assert again.status_code == 409 and "not waiting for its budget" in again.json()["error"]
    assert "waiting" not in closed["budget"]  # absent while the run waits for nobody
    assert next(c for c in closed["budget"]["counters"] if c["scope"] == "run")["tokens"] == 400
    assert closed["budget"]["budget"]["run"] == {"tokens": 1000}
    chunks = [e.chunk for e in await app.store.read_chunks(run_id, 0, 10_000)]
    [answered] = [c["data"] for c in chunks if c["type"] == "data-budget-answered"]
    assert answered["answeredBy"] == "ops" and answered["action"] == "raise"
