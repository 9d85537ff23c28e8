"""Forks in the dashboard, in a real headless Chromium: a fork's page names its origin and links to the comparison,
the comparison marks the first step where the runs differ and diffs the calls' arguments, and "Fork from here" on
a model step starts a fork and opens it. Steps are numbered as the API numbers them (from 0, a fork's copied steps
counted), a fork of a fork included."""

from __future__ import annotations

import collections

from playwright.async_api import expect
from temporalio.client import Client

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, closed_history, running_worker
from tests.support.browser import chromium, dashboard_server, shoot, signed_in_page
from tests.support.fork_agents import by_turn, call, lookup_tool, travel_agents


async def test_lineage_compare_and_fork_from_here(make_app: AppFactory, client: Client) -> None:
    executed: collections.Counter[str] = collections.Counter()
    app = make_app(travel_agents(executed))
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        original = await app.generate("travel", "Weather?")
        fork = await app.fork(original.run_id, at_step=1, agent_id="travel-v2")
        await fork.result()
        await closed_history(client, fork.run_id)

        _, page = await signed_in_page(browser, server, None, path=f"/#/runs/{fork.run_id}")
        lineage = page.locator(".lineage")
        await expect(lineage).to_contain_text(f"Forked from {original.run_id} at step 1", timeout=15_000)
        await lineage.get_by_role("link", name="Compare with origin").click()
        await expect(page).to_have_url(f"{server.url}/#/compare/{original.run_id}/{fork.run_id}")
        await expect(page.locator(".first-difference")).to_have_text("The runs differ from step 1.", timeout=15_000)
        rows = page.locator(".compare-table tbody tr[data-step]")
        await expect(rows).to_have_count(3)
        await expect(page.locator(".compare-table tr.first-differing")).to_have_attribute("data-step", "1")
        await expect(page.locator(".compare-table tr.same")).to_have_count(1)
        await expect(page.locator(".call-diff.differs").first).to_contain_text("other arguments (changed: city)")
        await shoot(page, "compare-runs")

        await page.goto(f"{server.url}/#/runs/{original.run_id}")
        await expect(page.locator(".lineage")).to_contain_text(f"Forks (1): {fork.run_id}", timeout=60_000)
        await page.goto(f"{server.url}/#/runs")  # visibility has the fork's TempoAgentForkOf now
        fork_row = page.locator(f'.runs tr[data-run-id="{fork.run_id}"]')
        await expect(fork_row.locator(".fork-of")).to_have_text(f" fork of {original.run_id}", timeout=15_000)
        await page.goto(f"{server.url}/#/runs/{original.run_id}")
        await page.locator("details.operator > summary").click()
        await page.get_by_role("button", name="Fork from step 2").click()
        await expect(page).not_to_have_url(f"{server.url}/#/runs/{original.run_id}", timeout=15_000)
        new_lineage = page.locator(".lineage")
        await expect(new_lineage).to_contain_text(f"Forked from {original.run_id} at step 2", timeout=15_000)
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=15_000)
        await expect(page.locator(".conversation").first).to_contain_text("All clear.")


async def test_retry_from_the_page_of_a_failed_run(make_app: AppFactory) -> None:
    """A run whose model failed at its second step: after the fix, "Retry from last good step" starts a fork at step
    1 (the lookup of step 0 is not run again) and opens it."""
    executed: collections.Counter[str] = collections.Counter()
    fixed: list[bool] = []

    def respond(request: ModelRequest) -> ScriptedResponse:
        if not any(m.role == "assistant" for m in request.messages):
            return ScriptedResponse(tool_calls=[call("Paris", "c1")])
        if not fixed:
            raise ConfigurationError("the prompt template is broken")
        return ScriptedResponse(text="Paris is clear.")

    app = make_app([Agent(id="travel", model=ScriptedModel(respond), tools={"lookup": lookup_tool(executed)})])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        failed = await app.generate("travel", "Weather in Paris?")
        assert failed.error is not None
        fixed.append(True)
        _, page = await signed_in_page(browser, server, None, path=f"/#/runs/{failed.run_id}")
        await expect(page.locator(".run[data-status=failed]")).to_be_visible(timeout=15_000)
        await page.get_by_role("button", name="Retry from last good step").click()
        await expect(page.locator(".lineage")).to_contain_text(f"Forked from {failed.run_id} at step 1", timeout=15_000)
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=15_000)
        await expect(page.locator(".conversation").first).to_contain_text("Paris is clear.")
        await expect(page.get_by_role("button", name="Retry from last good step")).to_be_hidden()
    assert executed == {"Paris": 1}


async def test_a_fork_of_a_fork_is_numbered_as_the_api_numbers_it(make_app: AppFactory, client: Client) -> None:
    """A fork at step 1 numbers its own steps 1 and 2; a fork of it at step 2 is at step 2 on its page, in its steps
    table, on the compare page and in the API."""
    tools = {"lookup": lookup_tool(collections.Counter())}
    responses = [
        ScriptedResponse(text="Paris first.", tool_calls=[call("Paris", "c1")]),
        ScriptedResponse(text="And Rome.", tool_calls=[call("Rome", "c2")]),
        ScriptedResponse(text="All clear."),
    ]
    app = make_app([Agent(id="travel", model=by_turn(responses), tools=tools)])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        original = await app.generate("travel", "Weather?")
        fork = await app.fork(original.run_id, at_step=1, messages="Rome, please.")
        await fork.result()
        again = await app.fork(fork.run_id, at_step=2, messages="Thanks!")
        await again.result()
        await closed_history(client, again.run_id)
        assert await app.fork_origin(again.run_id) == {"runId": fork.run_id, "step": 2}

        _, page = await signed_in_page(browser, server, None, path=f"/#/runs/{again.run_id}")
        await expect(page.locator(".lineage")).to_contain_text(f"Forked from {fork.run_id} at step 2", timeout=15_000)
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=15_000)
        await expect(page.locator(".facts")).to_contain_text("Steps3")
        await page.locator("details.operator > summary").click()
        own_steps = page.locator(".steps-table tbody tr")
        await expect(own_steps).to_have_count(1, timeout=15_000)
        await expect(own_steps.first).to_have_attribute("data-step", "2")
        await expect(own_steps.first.locator("td.num").first).to_have_text("2")
        await expect(page.get_by_role("button", name="Fork from step 2")).to_be_visible()

        await page.goto(f"{server.url}/#/compare/{fork.run_id}/{again.run_id}")
        await expect(page.locator(".first-difference")).to_have_text("The runs differ from step 2.", timeout=15_000)
        await expect(page.locator(".compare-table tr.first-differing")).to_have_attribute("data-step", "2")
        await expect(page.locator(".compare-table tr.first-differing th")).to_contain_text("2")
        await expect(page.locator(".compare-table tr.same")).to_have_count(2)
        await expect(page.locator('.fact[data-side="b"]')).to_contain_text(f"forked from {fork.run_id} at step 2")
        await expect(page.locator('.fact[data-side="b"]')).to_contain_text("3 steps")

        await page.goto(f"{server.url}/#/runs")  # the runs table counts the copied steps too
        row = page.locator(f'.runs tr[data-run-id="{again.run_id}"]')
        await expect(row.locator(".fork-of")).to_have_text(f" fork of {fork.run_id}", timeout=30_000)
        await expect(row.locator("td.num").first).to_have_text("3", timeout=15_000)
