"""The operations dashboard in a real headless Chromium, against a real API server, worker and Temporal dev server.

Each test drives the example app (``examples/operations_dashboard.py``) through the pages a person uses: the
inbox, a run's page, the forms; runs are started from the Python client while the pages are open, so what the
pages show arrives live. The screenshots the README shows are written here (``docs/screenshots``).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from playwright.async_api import Page, Route, expect

from tempo_agents import App, ToolContext, create_tool
from tests.conftest import AppFactory, running_worker
from tests.support.browser import (
    TOKENS,
    chromium,
    dashboard_server,
    desk_agent,
    inbox_item,
    shoot,
    signed_in_page,
)
from tests.support.examples import example_module


async def start(app: App, message: str, **options: Any) -> str:
    """Start a run of ``desk`` and return its id (at once: the run goes on)."""
    stream = await app.agent("desk").stream(message, **options)
    return stream.run_id


async def test_a_question_appears_live_is_answered_and_the_answer_streams_in(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        _, inbox = await signed_in_page(browser, server, "tok-alice")
        await expect(inbox.get_by_text("Nothing is waiting for you.")).to_be_visible()
        run_id = await start(app, "question", memory={"thread": "bookings", "resource": "acme"})
        card = inbox_item(inbox, run_id)
        await expect(card).to_be_visible(timeout=10_000)  # no reload: the live feed brought it
        await expect(card.get_by_text("Which city should I book?")).to_be_visible()
        await expect(card.get_by_text("thread bookings")).to_be_visible()
        others = [await start(app, message) for message in ("choose", "extras", "delete reports/2025.csv")]
        for other in others:
            await expect(inbox_item(inbox, other)).to_be_visible(timeout=10_000)
        await shoot(inbox, "inbox")

        _, follower = await signed_in_page(browser, server, "tok-alice", path=f"/#/runs/{run_id}")
        await expect(follower.locator(".pending form")).to_be_visible()
        await follower.evaluate(
            "window.__painted = []; addEventListener('tempo:chunk-painted', e => "
            "window.__painted.push([e.detail.chunk.type, e.detail.at]))"
        )
        await card.get_by_label("Your answer").fill("Lisbon")
        await card.get_by_role("button", name="Send").click()
        await expect(card.get_by_text("Answered as alice")).to_be_visible()

        final = "Thank you. I will go ahead with Lisbon, and I will confirm the booking by email shortly."
        await expect(follower.locator(".conversation")).to_contain_text(final, timeout=15_000)
        await expect(follower.locator(".conversation")).to_contain_text("answered by alice")
        await expect(follower.locator(".run[data-status=completed]")).to_be_visible(timeout=10_000)
        painted: list[list[Any]] = await follower.evaluate("window.__painted")
        text_frames = {at for kind, at in painted if kind == "text-delta"}
        assert len(text_frames) >= 3, f"the final text arrived in {len(text_frames)} paints, not streamed"
        await expect(card).to_be_hidden(timeout=5_000)
        await expect(inbox.get_by_text("3 waiting runs")).to_be_visible()

        choose, extras, _ = others
        await inbox_item(inbox, choose).get_by_role("button", name="Suite").click()  # one choice: a button
        await inbox_item(inbox, extras).get_by_label("Breakfast").check()  # several: checkboxes
        await inbox_item(inbox, extras).get_by_label("Late checkout").check()
        await inbox_item(inbox, extras).get_by_role("button", name="Send").click()
        chosen = await app.attach(choose, follow="run").result()
        assert chosen.text.endswith("I will go ahead with Suite, and I will confirm the booking by email shortly.")
        picked = await app.attach(extras, follow="run").result()
        assert "I will go ahead with Breakfast, Late checkout," in picked.text


async def test_approve_runs_the_tool_and_decline_sends_the_reason(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        approved = await start(app, "delete reports/q1.csv")
        declined = await start(app, "delete reports/q2.csv")
        _, page = await signed_in_page(browser, server, "tok-bob")
        first = inbox_item(page, approved)
        await expect(first.locator("pre")).to_contain_text('"path": "reports/q1.csv"')
        await shoot(page, "approval", first)
        await first.get_by_role("button", name="Approve").click()
        await expect(first).to_be_hidden(timeout=5_000)

        second = inbox_item(page, declined)
        await second.get_by_label("Reason (optional)").fill("keep it for the audit")
        await second.get_by_role("button", name="Decline").click()
        await expect(second).to_be_hidden(timeout=5_000)

        await page.goto(f"{server.url}/#/runs/{approved}")
        conversation = page.locator(".conversation")
        await expect(conversation.locator(".tool-call .result")).to_contain_text("reports/q1.csv", timeout=15_000)
        await expect(conversation).to_contain_text('Done: [{"deleted": "reports/q1.csv"}]')
        await expect(conversation).to_contain_text("answered by bob")
        await expect(page.locator(".timeline .tl-wait")).to_have_count(1, timeout=10_000)  # the wait for bob
        await expect(page.locator(".timeline .bar.running")).to_have_count(0, timeout=10_000)
        await shoot(page, "run-approved")
        await page.goto(f"{server.url}/#/runs/{declined}")
        await expect(page.locator(".conversation .msg .text").last).to_contain_text(
            "keep it for the audit", timeout=15_000
        )
        await expect(page.locator(".conversation")).to_contain_text("declined: keep it for the audit (by bob)")

        doomed = await start(app, "delete reports/q3.csv")
        await page.goto(f"{server.url}/#/runs/{doomed}")
        await expect(page.locator(".run[data-status=suspended]")).to_be_visible(timeout=10_000)
        await page.get_by_role("button", name="Cancel run…").click()
        await page.get_by_role("button", name="Keep running").click()  # the confirmation can be refused
        await expect(page.locator(".run[data-status=suspended]")).to_be_visible()
        await page.get_by_role("button", name="Cancel run…").click()
        await page.get_by_role("button", name="Cancel run", exact=True).click()
        await expect(page.locator(".run[data-status=cancelled]")).to_be_visible(timeout=10_000)


async def test_a_nested_resume_schema_becomes_a_form_that_shows_the_servers_errors(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        run_id = await start(app, "ship")
        _, page = await signed_in_page(browser, server, None)
        card = inbox_item(page, run_id)
        await expect(card.get_by_text("Where and how should this order ship?")).to_be_visible(timeout=10_000)
        await expect(card.locator(".deadline")).to_have_text(re.compile(r"due in 2[34]h"))
        await expect(card.locator(".deadline.soon")).to_have_count(0)  # red only when close
        for label in ("Street", "Postcode", "City", "Sku", "Quantity", "Express", "Carrier", "Note"):
            await expect(card.get_by_label(label, exact=True)).to_be_visible()
        await expect(card.get_by_label("Street", exact=True)).to_have_attribute("aria-required", "true")
        await expect(card.locator('[data-path="address.street"] label.required')).to_be_visible()
        await expect(card.locator('[data-path="note"] label.required')).to_have_count(0)

        await card.get_by_label("Street", exact=True).fill("Unter den Linden 1")
        await card.get_by_label("Postcode", exact=True).fill("10A")
        await card.get_by_label("City", exact=True).fill("Berlin")
        await card.get_by_label("Sku", exact=True).fill("PEN-1")
        await card.get_by_label("Quantity", exact=True).fill("3")
        await card.get_by_label("Carrier", exact=True).select_option("courier")
        await card.get_by_role("button", name="Resume").click()
        error = card.locator('[data-path="address.postcode"] > .field-error')
        await expect(error).to_contain_text("does not match", timeout=10_000)
        await expect(card.get_by_label("Street", exact=True)).to_have_value("Unter den Linden 1")  # kept as typed
        await shoot(page, "resume-form", card)

        await card.get_by_label("Postcode", exact=True).fill("10117")
        await card.get_by_role("button", name="Resume").click()
        await expect(card).to_be_hidden(timeout=5_000)
        result = await app.attach(run_id, follow="run").result()
        assert result.text == 'Done: [{"shipped": "A-1042", "to": "Berlin", "carrier": "courier"}]'


async def test_the_task_list_changes_while_the_run_works(make_app: AppFactory) -> None:
    # Each task's work waits until the page has shown that task in progress, however busy the machine is.
    shown_in_progress = asyncio.Semaphore(0)
    example = example_module("operations_dashboard.py")

    async def gated_work(data: Any, ctx: ToolContext) -> str:
        await shown_in_progress.acquire()
        return f"{data.task} done"

    tools = {
        **desk_agent().tools,
        "work": create_tool(id="work", description="Does one task", input_schema=example.WorkIn, execute=gated_work),
    }
    app = make_app([desk_agent(tools=tools)])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        _, page = await signed_in_page(browser, server, None, path="/#/runs")
        await start(app, "hello")
        greeting = await app.agent("desk").stream("hello", memory={"thread": "reports", "resource": "acme"})
        greeted = greeting.run_id
        await expect(page.locator("tbody tr")).to_have_count(2, timeout=10_000)  # live: both runs appear
        await page.get_by_label("Search").fill(greeted[:8])
        await expect(page.locator("tbody tr")).to_have_count(1)
        await expect(page.locator("tbody tr").first).to_have_attribute("data-run-id", greeted)
        await page.get_by_label("Search").fill("reports")  # a thread id
        await expect(page.locator(f'tbody tr[data-run-id="{greeted}"]')).to_have_count(1)
        await expect(page.locator("tbody tr")).to_have_count(1)

        # A run started while its thread's run is still active waits in the thread's queue, with no workflow yet,
        # and the run page cannot follow it until it starts ("no run ... exists"): this test watches a run that
        # runs, so the greeting ends first.
        await greeting.result()
        run_id = await start(app, "plan", memory={"thread": "reports", "resource": "acme"})
        await page.goto(f"{server.url}/#/runs/{run_id}")
        seen: list[tuple[str, ...]] = []
        active: set[str] = set()
        while not seen or seen[-1] != ("completed",) * 3:  # bounded by the test's timeout
            shown: list[list[str]] = await page.locator("li.task").evaluate_all(
                "els => els.map(e => [e.dataset.status, e.querySelector('.content').textContent])"
            )
            states = tuple(status for status, _ in shown)
            if states and (not seen or seen[-1] != states):
                seen.append(states)
                active.update(text for status, text in shown if status == "in_progress")
                if "in_progress" in states:
                    shown_in_progress.release()  # the page showed it: the task's work may end
            await asyncio.sleep(0.05)
        assert seen[-1] == ("completed",) * 3, seen
        assert len(seen) == 4, f"the page did not show each task in progress, then all done: {seen}"
        assert all(state.count("in_progress") == 1 for state in seen[:-1]), seen  # one active task at a time
        await expect(page.locator("li.task")).to_have_count(3)
        forms = {"Collecting the invoices", "Checking the totals", "Writing the report"}
        assert active and active <= forms, active  # the active task reads as its activeForm
        await expect(page.locator("li.task input:checked")).to_have_count(3)
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=10_000)
        await expect(page.locator(".timeline .bar.tool")).to_have_count(3, timeout=10_000)
        await expect(page.locator(".conversation")).to_contain_text("All three tasks are done")
        await expect(page.locator(".timeline .bar.running")).to_have_count(0, timeout=10_000)
        await shoot(page, "run")


async def test_two_people_answer_the_same_item_and_one_is_told_it_was_taken(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        run_id = await start(app, "question")
        pages = [(await signed_in_page(browser, server, token))[1] for token in ("tok-alice", "tok-bob", "tok-alice")]
        alice, bob, watcher = pages
        for page, city in ((alice, "Oslo"), (bob, "Rome")):
            await inbox_item(page, run_id).get_by_label("Your answer").fill(city)
        await expect(inbox_item(watcher, run_id)).to_be_visible()

        # The race is forced: both answers leave their browsers before either reaches the server (each page
        # holds its request until the other's is sent), so neither page can learn of the other's answer first.
        sent: list[Route] = []
        both_sent = asyncio.Event()

        async def hold_until_both_sent(route: Route) -> None:
            sent.append(route)
            if len(sent) == 2:
                both_sent.set()
            await both_sent.wait()
            await route.continue_()

        for page in (alice, bob):
            await page.route("**/api/inbox/answer", hold_until_both_sent)

        async def send(page: Page) -> tuple[int, dict[str, Any]]:
            async with page.expect_response("**/api/inbox/answer") as answer:
                await inbox_item(page, run_id).get_by_role("button", name="Send").click()
            response = await answer.value
            return response.status, await response.json()

        outcomes = dict(zip(("alice", "bob"), await asyncio.gather(send(alice), send(bob)), strict=True))
        # Every open dashboard hears of it live (no reload): a reader's card stays, saying who answered, and what.
        await expect(inbox_item(watcher, run_id).locator(".answered-mark")).to_contain_text(re.compile("^Answered by "))
        await expect(inbox_item(watcher, run_id).locator("form button:enabled")).to_have_count(0)  # nothing to send
        assert sorted(status for status, _ in outcomes.values()) == [200, 409], outcomes
        winner = next(name for name, (status, _) in outcomes.items() if status == 200)
        loser = "bob" if winner == "alice" else "alice"
        assert outcomes[winner][1]["answeredBy"] == winner
        won = "Rome" if winner == "bob" else "Oslo"
        answer = outcomes[loser][1].pop("answer")
        assert answer["answeredBy"] == winner and answer["action"] == "resume" and answer["data"] == won
        assert outcomes[loser][1] == {
            "error": f"already answered by {winner}",
            "code": "ALREADY_ANSWERED",
            "answeredBy": winner,
        }
        taken = inbox_item(bob if loser == "bob" else alice, run_id)
        await expect(taken.locator(".form-error.taken")).to_have_text(f"already answered by {winner}: “{won}”")
        await expect(taken.get_by_label("Your answer")).to_have_value("Rome" if loser == "bob" else "Oslo")  # kept
        result = await app.attach(run_id, follow="run").result()
        city = "Rome" if winner == "bob" else "Oslo"
        assert result.text.endswith(f"I will go ahead with {city}, and I will confirm the booking by email shortly.")
