"""A budget reached mid-run: the run finishes with ``budget-exceeded``, or waits for a person who raises the limit
(the step then runs) or ends the run; usage and what remains are read back from the App."""

from __future__ import annotations

from typing import Any

import pytest

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool
from tempo_agents.client.budget_usage import BudgetRefusedError, send_budget_answer
from tempo_agents.errors import ConfigurationError
from tempo_agents.metrics.run_metrics import BUDGET_STOPS, COST
from tempo_agents.workflows.payloads import BudgetAnswer
from tests.conftest import AppFactory, running_worker

STEP = Usage(input_tokens=60, output_tokens=40, total_tokens=100)
PRICES = {"scripted/priced": {"input": 2.5, "output": 10.0}}
"""A step of STEP costs 60 x 2.5 + 40 x 10 = 550 dollars per million steps: $0.00055."""
MEMORY = {"thread": "t-1", "resource": "acme"}


async def lookup(data: dict[str, Any]) -> str:
    return f"found {data['n']}"


def looping_agent(steps: int = 8) -> tuple[Agent, ScriptedModel]:
    """Calls ``lookup`` ``steps - 1`` times, then answers; every step uses 100 tokens."""
    responses = [ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"n": n})], usage=STEP) for n in range(steps)]
    responses[-1] = ScriptedResponse(text="All found.", usage=STEP)
    model = ScriptedModel(responses, model_id="priced")
    tool = create_tool(id="lookup", description="Looks a thing up", execute=lookup)
    return Agent(id="looper", model=model, tools={"lookup": tool}, default_options={"max_steps": 20}), model


def data_chunks(result: Any, kind: str) -> list[dict[str, Any]]:
    return [c.model_dump(by_alias=True)["data"] for c in result.chunks if c.type == kind]


def counter(usage: Any, scope: str, period: str) -> Any:
    return next(c for c in usage.counters if c.scope == scope and c.period == period)


async def test_a_cost_limit_of_the_resource_finishes_the_run_mid_way(make_app: AppFactory) -> None:
    agent, model = looping_agent()
    app = make_app([agent], prices=PRICES, budget={"resource": {"day": {"costUsd": 0.0015}}})
    stops_before = BUDGET_STOPS.labels(agent="looper", scope="resource", period="day", policy="finish")._value.get()
    cost_before = COST.labels(agent="looper", model="scripted/priced")._value.get()
    async with running_worker(app):
        result = await app.agent("looper").generate("find them", memory=MEMORY)
        usage = await app.budget_usage(result.run_id)

    # $0.00055 a step: after 3 steps $0.00165 >= $0.0015, so the 4th step is not sent to the model.
    assert result.finish_reason == "budget-exceeded"
    assert len(model.requests) == 3
    assert [r.payload.result for r in result.tool_results] == ["found 0", "found 1", "found 2"]
    [stop] = data_chunks(result, "data-budget-exceeded")
    assert stop["scope"] == "resource" and stop["period"] == "day" and stop["metric"] == "cost_usd"
    assert stop["used"] == pytest.approx(0.00165) and stop["limit"] == 0.0015 and stop["policy"] == "finish"
    assert stop["step"] == 3
    day = counter(usage, "resource", "day")
    assert day.cost_usd == pytest.approx(0.00165) and day.tokens == 300
    assert day.remaining_cost_usd == 0 and day.limit_cost_usd == 0.0015
    assert counter(usage, "run", "total").tokens == 300 and counter(usage, "run", "total").remaining_tokens is None
    assert counter(usage, "thread", "total").tokens == 300
    after = BUDGET_STOPS.labels(agent="looper", scope="resource", period="day", policy="finish")._value.get()
    assert after == stops_before + 1
    assert COST.labels(agent="looper", model="scripted/priced")._value.get() == pytest.approx(cost_before + 0.00165)

    # The next run of the tenant the same day is stopped before its first step.
    async with running_worker(app):
        second = await app.agent("looper").generate("again", memory={"thread": "t-2", "resource": "acme"})
    assert second.finish_reason == "budget-exceeded"
    assert len(model.requests) == 3


async def test_a_run_that_waits_gets_its_limit_raised_and_goes_on(make_app: AppFactory) -> None:
    agent, model = looping_agent(steps=5)
    app = make_app([agent], prices=PRICES)
    budget = {"run": {"tokens": 250}, "on_exceeded": "wait"}
    async with running_worker(app):
        first = await app.agent("looper").generate("find them", memory=MEMORY, budget=budget)
        assert first.finish_reason == "suspended"
        assert len(model.requests) == 3  # 300 tokens >= 250 before step 3
        [stop] = data_chunks(first, "data-budget-exceeded")
        assert (stop["scope"], stop["metric"], stop["used"], stop["limit"]) == ("run", "tokens", 300, 250)
        waiting = await app.list_suspended_runs(resource_id="acme")
        assert [(r.run_id, [c.tool_name for c in r.tool_calls]) for r in waiting.runs] == [(first.run_id, ["budget"])]
        assert waiting.runs[0].tool_calls[0].suspend_payload["waitId"] == "budget-3-0"
        usage = await app.budget_usage(first.run_id)
        assert usage.waiting is not None and usage.waiting.stop.limit == 250
        assert counter(usage, "run", "total").remaining_tokens == 0

        resumed = await app.answer_budget(first.run_id, budget={"run": {"tokens": 1_000}}, answered_by="ops")
        done = await resumed.result()
        with pytest.raises(BudgetRefusedError, match="not waiting for its budget"):
            await app.answer_budget(first.run_id, end=True)
        after = await app.budget_usage(first.run_id)
        assert (await app.list_suspended_runs(resource_id="acme")).runs == []

    assert done.finish_reason == "stop" and done.text == "All found."
    assert len(model.requests) == 5
    [answered] = data_chunks(done, "data-budget-answered")
    assert answered == {
        "waitId": "budget-3-0",
        "action": "raise",
        "answeredBy": "ops",
        "budget": {"run": {"tokens": 1000}, "onExceeded": "finish"},
    }
    assert counter(after, "run", "total").tokens == 500 and counter(after, "run", "total").remaining_tokens == 500
    assert after.waiting is None


async def test_a_run_that_waits_can_be_ended_by_the_person(make_app: AppFactory) -> None:
    agent, model = looping_agent(steps=5)
    app = make_app([agent], prices=PRICES, budget={"run": {"tokens": 100}, "on_exceeded": "wait"})
    async with running_worker(app):
        first = await app.agent("looper").generate("find them")
        assert first.finish_reason == "suspended"
        with pytest.raises(BudgetRefusedError, match="needs the new budget"):
            await send_budget_answer(app.client, first.run_id, BudgetAnswer(action="raise"))
        with pytest.raises(ConfigurationError, match="either budget"):
            await app.answer_budget(first.run_id, budget={}, end=True)
        ended = await (await app.answer_budget(first.run_id, end=True)).result()
        outcome = await app.client.get_workflow_handle(first.run_id).result()
        waiting = await app.list_suspended_runs()

    assert ended.finish_reason == "budget-exceeded"
    assert outcome["finishReason"] == "budget-exceeded"
    assert len(model.requests) == 1
    assert waiting.runs == []


async def test_a_cost_limit_on_a_model_without_a_price_fails_the_run_and_names_the_model(make_app: AppFactory) -> None:
    agent, model = looping_agent(steps=2)
    app = make_app([agent], prices={})  # no price at all: not even the defaults know "scripted/priced"
    async with running_worker(app):
        result = await app.agent("looper").generate("find them", budget={"run": {"costUsd": 1}})
        tokens_only = await app.agent("looper").generate("find them", budget={"run": {"tokens": 10_000}})

    assert result.finish_reason == "error"
    assert result.error is not None and 'no price for model "scripted/priced"' in result.error
    assert tokens_only.finish_reason == "stop"  # a token limit needs no price
    assert len(model.requests) == 2
