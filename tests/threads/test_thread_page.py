"""The dashboard's thread view in a real headless Chromium: linked from a run's page, it shows the active run, the
queue in order (a queued run removed from it with a click, a waiting run's answered rest not removable), the runs
done, and the thread's messages in order; a run that waits for a person is listed apart (it does not hold the
thread)."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.async_api import expect

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.threads.operations import ThreadSnapshot
from tests.conftest import AppFactory, running_worker
from tests.support.browser import chromium, dashboard_server, shoot, signed_in_page
from tests.support.polling import until
from tests.support.thread_agents import Gate, gated_agent

MEMORY = {"thread": "support-42", "resource": "acme"}


async def test_the_thread_view_shows_and_edits_the_queue(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        first = await app.stream("chat", "My order has not arrived.", memory=MEMORY, run_id="first-run")
        await app.stream("chat", "It was order 1187.", memory=MEMORY, run_id="second-run")
        await app.stream("chat", "Never mind, it is here.", memory=MEMORY, run_id="third-run")

        _, page = await signed_in_page(browser, server, None, path=f"/#/runs/{first.run_id}")
        await page.locator("a.thread-link").click(timeout=15_000)
        await expect(page).to_have_url(f"{server.url}/#/threads/support-42?resourceId=acme")
        await expect(page.locator(".active-runs li")).to_have_attribute("data-run-id", "first-run")
        queued = page.locator(".queued-runs li")
        await expect(queued).to_have_count(2)
        await expect(queued.nth(0)).to_contain_text("second-run")
        await expect(queued.nth(1)).to_contain_text("chat · position 2")
        await shoot(page, "thread")

        await queued.nth(0).get_by_role("button", name="Remove from queue").click()
        await expect(queued).to_have_count(1)
        await expect(queued.nth(0)).to_contain_text("chat · position 1")
        removed = page.locator('.done-runs li[data-run-id="second-run"]')
        await expect(removed).to_have_attribute("data-status", "removed")

        gate.open()
        done = page.locator(".done-runs li")
        await expect(done).to_have_count(3, timeout=30_000)
        await expect(page.locator(".queued-runs")).to_contain_text("Nothing is queued.")
        await expect(page.locator(".active-runs")).to_contain_text("No run is active.")
        messages = page.locator(".thread-messages li")
        await expect(messages).to_have_text(
            [
                "userMy order has not arrived.",
                "assistantMy order has not arrived. after 1",
                "userNever mind, it is here.",
                "assistantNever mind, it is here. after 2",
            ]
        )
        await page.locator('.done-runs li[data-run-id="third-run"] a').click()
        await expect(page).to_have_url(f"{server.url}/#/runs/third-run")


async def test_a_queued_runs_page_says_where_it_waits_and_follows_it_once_its_turn_comes(
    make_app: AppFactory,
) -> None:
    gate = Gate()  # run ids are the namespace's: these are this test's own
    app = make_app([gated_agent(gate)])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        first = await app.stream("chat", "My order has not arrived.", memory=MEMORY, run_id="turn-first")
        await app.stream("chat", "It was order 1187.", memory=MEMORY, run_id="turn-second")

        _, page = await signed_in_page(browser, server, None, path="/#/threads/support-42?resourceId=acme")
        await page.locator('.queued-runs li[data-run-id="turn-second"] a').click(timeout=15_000)
        await expect(page).to_have_url(f"{server.url}/#/runs/turn-second")
        await expect(page.locator(".run[data-status=queued]")).to_be_visible(timeout=10_000)
        note = page.locator(".queued-note")
        await expect(note).to_have_text(
            "Queued on thread support-42: position 1, behind turn-first. It starts when its turn comes."
        )
        await expect(page.locator("main p.error[role=alert]")).to_have_count(0)  # no "no run … exists"
        await note.locator("a", has_text="turn-first").click()
        await expect(page).to_have_url(f"{server.url}/#/runs/turn-first")
        await page.go_back()
        await expect(page.locator(".run[data-status=queued]")).to_be_visible(timeout=10_000)

        gate.open()
        assert await first.text == "My order has not arrived. after 1"
        await expect(page.locator(".conversation")).to_contain_text("It was order 1187. after 2", timeout=15_000)
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=15_000)
        await expect(note).to_be_hidden()
        await expect(page.locator("main p.error[role=alert]")).to_have_count(0)  # no "no run … exists"


async def test_the_thread_view_lists_a_run_that_waits_for_a_person_apart(make_app: AppFactory) -> None:
    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text == "Refund order 1187." and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("refund", {"order": 1187})])
        return ScriptedResponse(text="Refunded." if request.step else "Noted.")

    refund = create_tool(id="refund", description="Refunds", execute=lambda data: "refunded", require_approval=True)
    app = make_app([Agent(id="support", model=ScriptedModel(script), tools={"refund": refund})])
    memory = {"thread": "support-43", "resource": "acme"}
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        first = await app.generate("support", "Refund order 1187.", memory=memory, run_id="refund-run")
        assert first.finish_reason == "suspended"
        assert (await app.generate("support", "Thanks!", memory=memory, run_id="thanks-run")).text == "Noted."

        _, page = await signed_in_page(browser, server, None, path="/#/threads/support-43?resourceId=acme")
        waiting = page.locator(".waiting-runs li")
        await expect(waiting).to_have_count(1, timeout=15_000)
        await expect(waiting.nth(0)).to_have_attribute("data-run-id", "refund-run")
        await expect(waiting.nth(0)).to_contain_text("waiting")
        await expect(page.locator('.done-runs li[data-run-id="thanks-run"]')).to_have_count(1)
        await shoot(page, "thread-waiting")

        answered = await app.approve_tool_call("support", run_id=first.run_id)
        assert await answered.text == "Refunded."
        await page.reload()
        await expect(page.locator(".waiting-runs")).to_contain_text("No run waits for a person.", timeout=15_000)
        await expect(page.locator('.done-runs li[data-run-id="refund-run"]')).to_have_count(1, timeout=15_000)


async def test_the_thread_view_of_a_thread_id_with_a_slash(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    memory = {"thread": "team/alpha", "resource": "acme"}
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        first = await app.stream("chat", "Who is on call?", memory=memory, run_id="slash-first")
        await app.stream("chat", "And tomorrow?", memory=memory, run_id="slash-second")
        _, page = await signed_in_page(browser, server, None, path=f"/#/runs/{first.run_id}")
        await page.locator("a.thread-link").click(timeout=15_000)
        await expect(page).to_have_url(f"{server.url}/#/threads/team%2Falpha?resourceId=acme")
        await expect(page.locator(".active-runs li")).to_have_attribute("data-run-id", "slash-first")
        await expect(page.locator(".queued-runs li")).to_have_count(1)
        gate.open()
        await expect(page.locator(".done-runs li")).to_have_count(2, timeout=30_000)
        await expect(page.locator(".thread-messages li")).to_have_text(
            [
                "userWho is on call?",
                "assistantWho is on call? after 1",
                "userAnd tomorrow?",
                "assistantAnd tomorrow? after 2",
            ]
        )


async def test_an_answered_run_queued_behind_the_active_one_cannot_be_removed(make_app: AppFactory) -> None:
    """A waiting run's rest, answered while another run holds the thread, is queued: the thread says so (over HTTP
    and in Python) and the page offers no Remove from queue for it, which the thread would refuse."""
    gate = Gate()

    async def look(data: dict[str, Any]) -> str:
        await gate.wait()
        return "looked"

    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text == "Refund order 1187." and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("refund", {"order": 1187})])
        if last.role == "user" and last.text == "Where is it?" and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("look", {})])
        return ScriptedResponse(text="Done.")

    refund = create_tool(id="refund", description="Refunds", execute=lambda data: "refunded", require_approval=True)
    looking = create_tool(id="look", description="Looks, slowly", execute=look)
    app = make_app([Agent(id="support", model=ScriptedModel(script), tools={"refund": refund, "look": looking})])
    memory = {"thread": "support-44", "resource": "acme"}
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        first = await app.generate("support", "Refund order 1187.", memory=memory, run_id="answered-refund-run")
        assert first.finish_reason == "suspended"
        await until(lambda: _waiting(app, "support-44"))
        second = await app.stream("support", "Where is it?", memory=memory, run_id="answered-look-run")
        answered = await app.approve_tool_call("support", run_id=first.run_id)
        thread = await until(lambda: _queued(app, "support-44"))
        assert [(r.run_id, r.continues) for r in thread.queued] == [("answered-refund-run", True)]
        assert [r.continues for r in thread.active] == [None]

        async with httpx.AsyncClient(base_url=server.url) as http:
            view = (await http.get("/api/threads/support-44", params={"resourceId": "acme"})).json()
            assert view["runs"]["queued"] == [
                {"runId": "answered-refund-run", "agentId": "support", "state": "queued", "continues": True}
            ]
            assert view["runs"]["active"] == [{"runId": "answered-look-run", "agentId": "support", "state": "active"}]

        _, page = await signed_in_page(browser, server, None, path="/#/threads/support-44?resourceId=acme")
        queued = page.locator(".queued-runs li")
        await expect(queued).to_have_count(1, timeout=15_000)
        await expect(queued.nth(0)).to_have_attribute("data-run-id", "answered-refund-run")
        await expect(queued.nth(0)).to_contain_text("answered, goes on in its turn")
        await expect(queued.nth(0).get_by_role("button", name="Remove from queue")).to_have_count(0)
        await shoot(page, "thread-continuation")

        gate.open()
        assert await second.text == "Done."
        assert await answered.text == "Done."
        await expect(page.locator(".queued-runs")).to_contain_text("Nothing is queued.", timeout=30_000)
        await expect(page.locator('.done-runs li[data-run-id="answered-refund-run"]')).to_have_count(1, timeout=30_000)


async def _waiting(app: App, thread_id: str) -> bool:
    return bool((await app.thread(thread_id, resource_id="acme")).waiting)


async def _queued(app: App, thread_id: str) -> ThreadSnapshot | None:
    thread = await app.thread(thread_id, resource_id="acme")
    return thread if thread.queued else None
