"""The inbox as a person reads and works through it, in a real headless Chromium against a real server, worker and
Temporal: on a phone with long names, while someone else answers, after answering, with many waiting calls, and the
Answered view while many runs still wait."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

import httpx
from playwright.async_api import Page, Route, expect

from tempo_agents import App, ScriptedModel, ScriptedResponse, ScriptedToolCall
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker
from tests.support.browser import (
    TOKENS,
    chromium,
    dashboard_server,
    desk_agent,
    inbox_item,
    open_page,
    page_width,
    shoot,
    signed_in_page,
)
from tests.support.contrast import low_contrast

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
LONG_NAME = "Accounts payable reconciliation desk for the northern regions"  # with " (…)" below: 62 characters


async def settled(app: App, message: str, agent: str = "desk", **options: Any) -> str:
    """Start a run and return its id once its first segment ended (it waits, or it finished)."""
    stream = await app.agent(agent).stream(message, **options)
    await stream.result()
    return stream.run_id


def pairs(request: ModelRequest) -> ScriptedResponse:
    """A model that deletes two files at once (two calls waiting in one run), then is done."""
    last = request.messages[-1]
    if last.role == "tool":
        return ScriptedResponse("Done.")
    calls = [ScriptedToolCall("delete_file", {"path": f"reports/{last.text}-{n}.csv"}) for n in ("a", "b")]
    return ScriptedResponse(tool_calls=calls)


async def focused_run(page: Page) -> str | None:
    """The run of the inbox card whose form has the focus (``None``: the focus is in no card's form)."""
    found: str | None = await page.evaluate(
        "document.activeElement.closest('article form') ? "
        "document.activeElement.closest('article').dataset.runId : null"
    )
    return found


async def test_on_a_phone_an_agent_with_a_long_name_keeps_the_inbox_to_the_viewports_width(
    make_app: AppFactory,
) -> None:
    long_id = "reconciliation-" + "north" * 9  # 60 characters
    name = LONG_NAME + "!"
    assert len(name) == 62
    app = make_app([desk_agent(), desk_agent(id=long_id, name=name, agents={})])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        run_id = await settled(app, "delete reports/north.csv", long_id)
        await settled(app, "question", long_id, memory={"thread": "t-" + "long" * 20, "resource": "r-" + "x" * 60})
        page = await open_page(browser, server, "/#/inbox", PHONE, is_mobile=True, has_touch=True)
        await expect(inbox_item(page, run_id)).to_be_visible(timeout=15_000)
        await expect(page.get_by_label("Agent").locator("option")).to_have_count(
            4
        )  # every agent, desk, its researcher, the long one
        assert await page_width(page) <= PHONE["width"]
        await page.get_by_label("Agent").select_option(long_id)  # chosen, the long name is what the filter shows
        await expect(page.locator("article.item")).to_have_count(2)
        assert await page_width(page) <= PHONE["width"]
        select = await page.get_by_label("Agent").bounding_box()
        assert select is not None and select["x"] + select["width"] <= PHONE["width"]
        await shoot(page, "phone-inbox-long-names")


async def test_after_answering_the_top_card_the_focus_goes_to_the_card_now_at_the_top(make_app: AppFactory) -> None:
    app = make_app([desk_agent(model=ScriptedModel(pairs), agents={})])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        for name in ("one", "two"):  # two runs of two waiting calls
            await settled(app, name)
        _, page = await signed_in_page(browser, server, "tok-alice")
        cards = page.locator("article.item")
        await expect(cards).to_have_count(4, timeout=15_000)
        for _ in range(3):
            keys = [await cards.nth(n).get_attribute("data-item") for n in range(await cards.count())]
            await cards.first.get_by_role("button", name="Approve").click()
            await expect(page.locator(f"article.item[data-item='{keys[0]}']")).to_have_count(0, timeout=10_000)
            await expect(cards).to_have_count(len(keys) - 1, timeout=10_000)
            await page.wait_for_timeout(2000)
            focused = await page.evaluate("document.activeElement.closest('article.item')?.dataset.item ?? null")
            top = await cards.first.get_attribute("data-item")
            assert focused == top, (keys, focused, top)  # the card now at the top, not the one after it


async def test_an_answer_given_elsewhere_stays_on_the_readers_card_saying_who_what_and_when(
    make_app: AppFactory,
) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        approved = await settled(app, "delete reports/approved.csv")
        declined = await settled(app, "delete reports/declined.csv")
        asked = await settled(app, "question")
        waiting = await settled(app, "delete reports/waiting.csv")
        _, bob = await signed_in_page(browser, server, "tok-bob")
        _, alice = await signed_in_page(browser, server, "tok-alice")
        for run_id in (approved, declined, asked, waiting):
            await expect(inbox_item(bob, run_id)).to_be_visible(timeout=15_000)
            await expect(inbox_item(alice, run_id)).to_be_visible(timeout=15_000)
        await expect(bob.locator("#inbox-count")).to_have_text("4")

        # Bob only reads. Alice approves in her browser, answers the question; carol declines through the Python
        # client (no dashboard): each of Bob's cards stays where it was, saying who answered, what, and when.
        hh_mm = r"\d\d:\d\d"
        await inbox_item(alice, approved).get_by_role("button", name="Approve").click()
        mark = inbox_item(bob, approved).locator(".answered-mark")
        await expect(mark).to_have_text(re.compile(rf"^Approved by alice, {hh_mm} Dismiss$"), timeout=10_000)
        await inbox_item(alice, asked).get_by_label("Your answer").fill("Lisbon")
        await inbox_item(alice, asked).get_by_role("button", name="Send").click()
        await expect(inbox_item(bob, asked).locator(".answered-mark")).to_have_text(
            re.compile(rf"^Answered by alice, {hh_mm}: “Lisbon” Dismiss$"), timeout=10_000
        )
        await app.decline_tool_call("desk", run_id=declined, reason="keep it", answered_by="carol")
        await expect(inbox_item(bob, declined).locator(".answered-mark")).to_have_text(
            re.compile(rf"^Declined by carol, {hh_mm} \(“keep it”\) Dismiss$"), timeout=15_000
        )
        await expect(bob.locator("#inbox-count")).to_have_text("1", timeout=15_000)  # the count says what waits
        cards = bob.locator("article.item")
        assert [await cards.nth(n).get_attribute("data-run-id") for n in range(4)] == [
            waiting,
            asked,
            declined,
            approved,
        ]  # in place: nothing moved under the reader's eyes
        for run_id in (approved, declined, asked):  # what was asked stays readable, nothing can be sent
            await expect(
                inbox_item(bob, run_id).locator("form button:enabled, form :is(input, textarea):enabled")
            ).to_have_count(0)
            await expect(inbox_item(bob, run_id).locator("form .actions")).to_be_hidden()
            await expect(inbox_item(bob, run_id).locator(".waited")).to_have_count(0)
        await expect(inbox_item(bob, approved).locator("form pre")).to_contain_text("reports/approved.csv")
        await expect(inbox_item(bob, asked).locator("form")).to_contain_text("Which city should I book?")
        await expect(inbox_item(bob, waiting).get_by_role("button", name="Approve")).to_be_enabled()
        await shoot(bob, "inbox-answered-elsewhere", inbox_item(bob, approved))
        for scheme in ("light", "dark"):  # the marks read as well as the rest
            await bob.emulate_media(color_scheme=scheme)
            assert not await low_contrast(bob), scheme

        await inbox_item(bob, approved).get_by_role("button", name="Dismiss").click()  # until he dismisses it ...
        await expect(inbox_item(bob, approved)).to_have_count(0)
        await expect(inbox_item(bob, declined)).to_be_visible()
        await bob.reload()  # ... or moves on
        await expect(inbox_item(bob, waiting)).to_be_visible(timeout=15_000)
        await expect(cards).to_have_count(1)


async def test_the_answered_view_lists_answers_newest_first_however_many_runs_wait(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        approved = await settled(app, "delete reports/approved.csv")
        declined = await settled(app, "delete reports/declined.csv")
        asked = await settled(app, "question")
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            as_alice = {"authorization": "Bearer tok-alice"}
            answer = {"runId": approved, "action": "approve"}
            assert (await http.post("/api/inbox/answer", json=answer, headers=as_alice)).status_code == 200
            await app.attach(approved, follow="run").result()
            await app.decline_tool_call("desk", run_id=declined, reason="keep it", answered_by="carol")  # Python
            await app.attach(declined, follow="run").result()
            answer = {"runId": asked, "action": "resume", "resumeData": "Lisbon"}
            assert (
                await http.post("/api/inbox/answer", json=answer, headers={"authorization": "Bearer tok-bob"})
            ).is_success
            await app.attach(asked, follow="run").result()
            for n in range(30):  # then 30 runs that wait: more than a page of the latest runs
                await settled(app, f"delete reports/waiting-{n}.csv")

            _, page = await signed_in_page(browser, server, "tok-alice", path="/#/answered")
            rows = page.locator(".answers-table tbody tr")
            await expect(rows).to_have_count(3, timeout=15_000)
            await expect(page.locator(".answered-view [role=status]")).to_have_text("3 answers")
            shown = [
                (
                    await rows.nth(n).get_attribute("data-run-id"),
                    await rows.nth(n).locator(".answerer").text_content(),
                    await rows.nth(n).locator(".what").text_content(),
                )
                for n in range(3)
            ]
            assert shown == [
                (asked, "bob", "“Lisbon”"),
                (declined, "carol", "declined (“keep it”)"),
                (approved, "alice", "approved"),
            ]
            await expect(rows.first.locator("td").first).not_to_be_empty()  # when
            await shoot(page, "answered-while-runs-wait")

            first = (await http.get("/api/inbox/answered", params={"perPage": 2}, headers=as_alice)).json()
            assert ([i["runId"] for i in first["items"]], first["total"]) == ([asked, declined], 3)
            rest = await http.get(
                "/api/inbox/answered", params={"perPage": 2, "cursor": first["nextCursor"]}, headers=as_alice
            )
            assert ([i["runId"] for i in rest.json()["items"]], rest.json()["nextCursor"]) == ([approved], None)


async def test_thirty_waiting_calls_are_grouped_identical_ones_folded_behind_a_count_decision_first(
    make_app: AppFactory,
) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        for n in range(15):  # one question asked fifteen times, between fifteen different files to delete
            await settled(app, "question")
            await settled(app, f"delete reports/{n:02d}.csv")
        await settled(app, "choose")
        await settled(app, "choose")
        _, page = await signed_in_page(browser, server, "tok-alice")
        cards = page.locator("article.item")
        await expect(cards).to_have_count(25, timeout=15_000)  # a page: the newest 25 of 32 waiting runs
        questions = page.locator("article.item.question:has-text('Which city should I book?')")
        count = await questions.count()
        deletes = await page.locator("article.item.approval").count()
        assert (count, deletes) == (11, 12), (count, deletes)

        # Identical calls are one group: its first card shows how many wait alike and its decision, the rest fold.
        visible = page.locator("article.item:visible")
        await expect(visible).to_have_count(deletes + 2)  # every file apart; one question; one choice of room
        head = questions.first.locator(".group-head")
        await expect(head).to_contain_text(f"{count} waiting alike: the same question from Front desk")
        kinds = await cards.evaluate_all(
            "els => els.map(e => e.matches('.question') ? 'q' : e.matches('.approval') ? 'a' : 'c')"
        )
        assert "".join(kinds).count("q" * count) == 1  # the group's cards stand together
        first = questions.first
        first_form = await first.locator("form").evaluate(
            "(form) => form.compareDocumentPosition(form.closest('article').querySelector('.asked'))"
        )
        assert first_form & 4  # the decision comes before what led to it (DOCUMENT_POSITION_FOLLOWING)
        await shoot(page, "inbox-grouped", first)
        for scheme in ("light", "dark"):
            await page.emulate_media(color_scheme=scheme)
            assert not await low_contrast(page), scheme
        await page.emulate_media(color_scheme="light")
        tall = await page.evaluate("document.documentElement.scrollHeight")

        await head.get_by_role("button", name=f"Show the other {count - 1}").click()
        await expect(visible).to_have_count(24)  # the question's group open, the room's still folded
        await expect(head.get_by_role("button", name="Fold")).to_have_attribute("aria-expanded", "true")
        await head.get_by_role("button", name="Fold").click()
        await expect(visible).to_have_count(deletes + 2)

        # Answering the group's card brings out the next one, with the focus in it: one after the other. The page's
        # reload that the answer sets off is held back until after the card has left (as on a busy server): the
        # reload moves the group's cards after the file it now follows, and the focus stays in the next card.
        async def reload_late(route: Route) -> None:
            await asyncio.sleep(1.5)
            await route.continue_()

        await page.route(re.compile(r"/api/inbox(\?|$)"), reload_late)
        answered = await first.get_attribute("data-item")
        await first.get_by_label("Your answer").fill("Lisbon")
        await first.get_by_role("button", name="Send").click()
        await expect(page.locator(f"article.item[data-item='{answered}']")).to_have_count(0, timeout=10_000)
        now_first = questions.first
        await expect(now_first).to_be_visible()
        await expect(now_first.get_by_label("Your answer")).to_be_focused()
        await expect(cards).to_have_count(25, timeout=15_000)  # the reload came: an older run took the place
        await expect(now_first.locator(".group-head")).to_contain_text(re.compile(r"^\d+ waiting alike"))
        left = await questions.count()
        await expect(now_first.locator(".group-head")).to_contain_text(f"{left} waiting alike")
        await expect(now_first.get_by_label("Your answer")).to_be_focused()
        await page.unroute_all(behavior="wait")  # a reload still held back goes on before the next step

        await page.get_by_label("Group by").select_option("tool")  # by tool: one group per tool
        await expect(visible).to_have_count(2)
        await expect(page.locator(".group-head")).to_have_text(
            [re.compile(r"^\d+ waiting on (ask_user|delete_file)Show the other \d+$")] * 2
        )
        await page.get_by_label("Group by").select_option("none")
        await expect(visible).to_have_count(await cards.count())
        flat = await page.evaluate("document.documentElement.scrollHeight")
        assert tall < flat * 0.75, (tall, flat)  # grouped, the page is much shorter than the wall of cards


async def test_the_answered_view_leaves_out_calls_whose_deadline_passed(make_app: AppFactory) -> None:
    app = make_app([desk_agent(), desk_agent(id="quick", agents={}, suspend_expires_in=timedelta(seconds=1))])
    async with running_worker(app), dashboard_server(app) as server, httpx.AsyncClient(base_url=server.url) as http:
        expired = await settled(app, "delete reports/expired.csv", "quick")
        await app.attach(expired, follow="run").result()  # declined by its deadline: nobody answered it
        answered = await settled(app, "delete reports/answered.csv")
        await app.approve_tool_call("desk", run_id=answered, answered_by="alice")
        await app.attach(answered, follow="run").result()
        page = (await http.get("/api/inbox/answered")).json()
    assert [(item["runId"], item["answeredBy"], item["action"]) for item in page["items"]] == [
        (answered, "alice", "approve")
    ]
