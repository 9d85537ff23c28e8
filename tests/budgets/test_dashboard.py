"""A run waiting for its budget in the dashboard (real Chromium): the inbox shows what was reached and raises the
limit under the signed-in person's name; the run page shows usage and what remains, and ends a waiting run."""

from __future__ import annotations

from typing import Any

from playwright.async_api import expect

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool
from tests.conftest import AppFactory, running_worker
from tests.support.browser import TOKENS, chromium, dashboard_server, signed_in_page

STEP = Usage(input_tokens=60, output_tokens=40, total_tokens=100)


async def lookup(data: dict[str, Any]) -> str:
    return "found"


def spender() -> Agent:
    responses = [ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"n": n})], usage=STEP) for n in range(3)]
    model = ScriptedModel([*responses, ScriptedResponse(text="All found.", usage=STEP)], model_id="priced")
    return Agent(
        id="spender", model=model, tools={"lookup": create_tool(id="lookup", description="Looks up", execute=lookup)}
    )


async def test_a_budget_wait_is_raised_from_the_inbox_and_ended_from_the_run_page(make_app: AppFactory) -> None:
    app = make_app([spender()], prices={"scripted/priced": {"input": 2.5, "output": 10.0}})
    budget = {"run": {"tokens": 200}, "on_exceeded": "wait"}
    memory = {"thread": "t", "resource": "acme"}
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        raised = await app.agent("spender").generate("spend", budget=budget, memory=memory)
        _, inbox = await signed_in_page(browser, server, "tok-alice")
        card = inbox.locator(f'article[data-run-id="{raised.run_id}"]')
        await expect(card.get_by_text("The run budget is reached: 200 of 200 tokens used.")).to_be_visible()
        await card.get_by_label("New limit (tokens)").fill("ten")
        await card.get_by_role("button", name="Raise limit").click()
        await expect(card.get_by_text("a whole number of tokens, 0 or more")).to_be_visible()
        await card.get_by_label("New limit (tokens)").fill("1000")
        await card.get_by_role("button", name="Raise limit").click()
        await expect(card.get_by_text("Budget raised")).to_be_visible()
        done = await app.attach(raised.run_id, follow="run").result()

        ended = await app.agent("spender").generate("spend", budget=budget)
        _, page = await signed_in_page(browser, server, "tok-alice", path=f"/#/runs/{ended.run_id}")
        section = page.locator("section.budget")
        await expect(section.locator('tr[data-scope="run"]')).to_contain_text("200 of 200")
        await expect(section.locator('tr[data-scope="run"]')).to_contain_text("0 tokens")
        await expect(section.locator('tr[data-scope="run"]')).to_contain_text("$0.0011")
        await section.get_by_role("button", name="End run").click()
        await expect(section.get_by_text("Run ended")).to_be_visible()
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=15_000)
        await expect(section.get_by_text("Run ended")).to_be_visible()  # still, once the page shows the run ended
        outcome = await app.client.get_workflow_handle(ended.run_id).result()

    assert done.finish_reason == "stop" and done.text == "All found."
    chunks = [e.chunk for e in await app.store.read_chunks(raised.run_id, 0, 10_000)]
    [answered] = [c["data"] for c in chunks if c["type"] == "data-budget-answered"]
    assert answered["answeredBy"] == "alice"
    assert answered["budget"]["run"] == {"tokens": 1000}
    assert outcome["finishReason"] == "budget-exceeded"
