"""The dashboard an approver can trust, in a real headless Chromium against a real server, worker and Temporal.

Each test is a defect found by using the pages from outside: a long token that widened every page, an answer by
someone else that was never shown, a cancelled run that stayed answerable, calls labelled "done" that were
declined, text that reads differently from what it is, what was asked hidden from the approver, a phone that
scrolled sideways, labels too faint to read, a timeline that hid the waits, and the smaller ones.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import httpx
from playwright.async_api import Route, expect

from tempo_agents import App
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
LONG_TOKEN = "x" * 20_000


async def start(app: App, message: str, **options: Any) -> str:
    stream = await app.agent("desk").stream(message, **options)
    return stream.run_id


async def settled(app: App, message: str, agent: str = "desk", **options: Any) -> str:
    """Start a run and return its id once its first segment ended (it waits, or it finished)."""
    stream = await app.agent(agent).stream(message, **options)
    await stream.result()
    return stream.run_id


async def test_a_long_unbroken_token_keeps_every_page_to_the_viewports_width(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        run_id = await start(app, f"delete reports/{LONG_TOKEN}")
        for viewport in (DESKTOP, PHONE):
            page = await open_page(browser, server, "/#/inbox", viewport)
            card = inbox_item(page, run_id)
            await expect(card.locator("pre")).to_contain_text("reports/xxxx", timeout=15_000)
            assert await page_width(page) <= viewport["width"], viewport
            await expect(card.get_by_role("link", name="Open run")).to_be_in_viewport()
            shown = await card.locator("pre").text_content() or ""
            assert LONG_TOKEN not in shown and len(shown) < 5_000  # cut, with a way to see it all
            if viewport is PHONE:
                await shoot(page, "phone-inbox")
            await card.locator("pre + button").get_by_text("Show all").click()  # the arguments' own
            await expect(card.locator("pre")).to_contain_text(LONG_TOKEN)
            assert await page_width(page) <= viewport["width"], viewport  # all of it, wrapped inside its block

            await card.get_by_role("link", name="Open run").click()
            await expect(page.locator(".conversation .tool-call pre.args")).to_contain_text("reports/xxxx")
            await expect(page.locator(".pending form")).to_be_visible()
            assert await page_width(page) <= viewport["width"], viewport
            await page.context.close()


async def test_an_answer_given_first_elsewhere_is_shown_live_with_who_and_what(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        typed = await start(app, "delete reports/typed.csv")
        clicked = await start(app, "delete reports/clicked.csv")
        _, bob = await signed_in_page(browser, server, "tok-bob")
        _, alice = await signed_in_page(browser, server, "tok-alice")
        for run_id in (typed, clicked):
            await expect(inbox_item(bob, run_id)).to_be_visible(timeout=15_000)
            await expect(inbox_item(alice, run_id)).to_be_visible(timeout=15_000)

        # Bob is typing a reason when Alice approves: his card says so at once, without his pressing anything.
        await inbox_item(bob, typed).get_by_label("Reason (optional)").fill("wait for the audit")
        await inbox_item(alice, typed).get_by_role("button", name="Approve").click()
        taken = inbox_item(bob, typed)
        await expect(taken.locator(".form-error.taken")).to_have_text("already answered by alice: approved")
        await expect(taken.get_by_role("button", name="Decline")).to_be_disabled()
        await expect(taken.get_by_label("Reason (optional)")).to_have_value("wait for the audit")

        # Bob presses Approve; on its way, Alice declines through another client: Bob's answer is refused, and he
        # reads who answered and what.
        async def alice_first(route: Route) -> None:
            await app.decline_tool_call("desk", run_id=clicked, reason="not this quarter", answered_by="alice")
            await route.continue_()

        await bob.route("**/api/inbox/answer", alice_first)
        async with bob.expect_response("**/api/inbox/answer") as answered:
            await inbox_item(bob, clicked).get_by_role("button", name="Approve").click()
        refused = await answered.value
        assert refused.status == 409
        body = await refused.json()
        assert body["answeredBy"] == "alice" and body["answer"]["action"] == "decline"
        assert body["answer"]["reason"] == "not this quarter"
        late = inbox_item(bob, clicked)
        expected = "already answered by alice: declined (“not this quarter”)"
        await expect(late.locator(".form-error.taken")).to_have_text(expected)

        # Both stay, persistently, after the inbox has reloaded without them, until Bob dismisses them.
        await expect(bob.get_by_text("Nothing is waiting for you.")).to_be_visible(timeout=15_000)
        await expect(taken.locator(".form-error.taken")).to_have_text("already answered by alice: approved")
        await expect(late.locator(".form-error.taken")).to_have_text(expected)
        await shoot(bob, "answered-elsewhere", late)
        await taken.get_by_role("button", name="Dismiss").click()
        await expect(taken).to_have_count(0)
        await expect(late).to_be_visible()


async def test_a_cancelled_waiting_run_is_cancelled_everywhere_and_nothing_waits(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        run_id = await start(app, "question")
        page = await open_page(browser, server, f"/#/runs/{run_id}", DESKTOP)
        await expect(page.locator(".pending form")).to_be_visible(timeout=15_000)
        await page.get_by_role("button", name="Cancel run…").click()
        await page.get_by_role("button", name="Cancel run", exact=True).click()
        await expect(page.locator(".run[data-status=cancelled]")).to_be_visible(timeout=15_000)
        conversation = page.locator(".conversation")
        await expect(conversation).to_contain_text("The run was cancelled", timeout=15_000)
        await expect(page.locator(".pending form")).to_have_count(0)
        await expect(page.get_by_role("button", name="Send")).to_have_count(0)
        await expect(conversation.locator(".tool-call .tool-state")).to_have_text("cancelled")
        await expect(conversation).not_to_contain_text("without a finish chunk")
        await expect(conversation.locator(".segment-end.aborted")).to_have_count(1)

        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            detail = (await http.get(f"/api/runs/{run_id}")).json()
            assert (detail["status"], detail["runStatus"], detail["pending"]) == ("cancelled", "cancelled", [])
            failed = (await http.get("/api/dashboard/runs", params={"status": "failed"})).json()
            assert run_id not in [run["runId"] for run in failed["runs"]]
            cancelled = (await http.get("/api/dashboard/runs", params={"status": "cancelled"})).json()
            assert run_id in [run["runId"] for run in cancelled["runs"]]
            inbox = (await http.get("/api/inbox")).json()
            assert run_id not in [entry["runId"] for entry in inbox["items"]]
        await page.goto(f"{server.url}/#/runs")
        await page.get_by_label("Status").select_option("failed")
        await expect(page.get_by_text("0 runs")).to_be_visible()
        await page.get_by_label("Status").select_option("cancelled")
        await expect(page.locator(f'tbody tr[data-run-id="{run_id}"] .status')).to_have_text("cancelled")


async def test_declined_expired_errored_and_cancelled_calls_are_labelled_as_such(make_app: AppFactory) -> None:
    app = make_app([desk_agent(), desk_agent(id="quick", agents={}, suspend_expires_in=timedelta(seconds=1))])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        declined = await settled(app, "delete reports/declined.csv")
        expired = await settled(app, "delete reports/expired.csv", "quick")
        errored = await settled(app, "stamp 0")  # 0 is refused by the tool's input schema
        cancelled = await settled(app, "delete reports/cancelled.csv")
        await app.decline_tool_call("desk", run_id=declined, reason="keep it", answered_by="alice")
        await app.attach(declined, follow="run").result()
        await app.attach(expired, follow="run").result()
        await app.attach(errored, follow="run").result()
        await app.client.get_workflow_handle(cancelled).cancel()
        page = await open_page(browser, server, "/#/inbox", DESKTOP)
        for run_id, label, colour in (
            (declined, "declined", "bad"),
            (expired, "expired", "wait"),
            (errored, "error", "bad"),
            (cancelled, "cancelled", "bad"),
        ):
            await page.goto(f"{server.url}/#/runs/{run_id}")
            state = page.locator(".conversation .tool-call .tool-state")
            await expect(state).to_have_text(label, timeout=15_000)
            await expect(state).to_have_class(f"tool-state {colour}")
            await expect(page.locator(".conversation .segment-end").last).not_to_have_text("waiting for a person")


async def test_bidi_and_invisible_characters_are_shown_escaped_where_an_approver_judges(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        run_id = await start(app, "delete invoice\u202efdp.exe\u200b")
        page = await open_page(browser, server, "/#/inbox", DESKTOP)
        arguments = inbox_item(page, run_id).locator("pre")
        await expect(arguments).to_contain_text("invoice\\u202Efdp.exe\\u200B", timeout=15_000)
        shown = await arguments.text_content() or ""
        assert "\u202e" not in shown and "\u200b" not in shown
        marks = inbox_item(page, run_id).locator("pre .invisible")
        await expect(marks).to_have_count(2)
        await expect(marks.first).to_have_attribute("title", "hidden character U+202E")
        await page.goto(f"{server.url}/#/runs/{run_id}")
        run_args = page.locator(".conversation .tool-call pre.args")
        await expect(run_args).to_contain_text("invoice\\u202Efdp.exe", timeout=15_000)
        await expect(page.locator(".pending pre")).to_contain_text("invoice\\u202Efdp.exe")


async def test_the_approver_sees_what_was_asked_and_the_operator_each_steps_input_latency_and_tokens(
    make_app: AppFactory,
) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        prompt = "Please delete reports/2024.csv, it is obsolete"
        run_id = await settled(app, prompt)
        page = await open_page(browser, server, "/#/inbox", DESKTOP)
        asked = inbox_item(page, run_id).locator(".asked")
        await expect(asked.locator(".prompt")).to_contain_text(prompt, timeout=15_000)
        await expect(asked.locator(".lead")).to_contain_text("Deleting.")

        await page.goto(f"{server.url}/#/runs/{run_id}")
        await expect(page.locator(".conversation .msg.user")).to_contain_text(prompt)
        await expect(page.locator(".conversation .msg").first).to_have_class("msg user")  # before the assistant
        await page.get_by_text("Model steps: input, latency, tokens").click()
        first = page.locator('.steps-table tr[data-step="0"]')
        await expect(first.locator(".tokens")).to_have_text("120 in · 40 out")
        await expect(first.locator(".latency")).to_have_text(re.compile(r"^\d+\.\d\ds$"))
        await first.get_by_text("1 message sent, 1 new").click()
        await expect(first.locator(".input-message.user")).to_contain_text(prompt)
        await shoot(page, "run-asked-and-steps")

        await page.locator(".pending").get_by_role("button", name="Approve").click()
        second = page.locator('.steps-table tr[data-step="1"]')
        await expect(second.locator(".tokens")).to_have_text("120 in · 40 out", timeout=15_000)
        await second.get_by_text("3 messages sent, 2 new").click()
        await expect(second.locator(".input-message.assistant")).to_contain_text("Deleting.")
        await expect(second.locator(".input-message.tool")).to_contain_text("delete_file")


async def test_on_a_phone_the_run_page_fits_its_summary_sits_in_the_margin_and_the_answer_comes_first(
    make_app: AppFactory,
) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        path = "reports/quarterly/" + "-".join(["consolidated"] * 6) + ".csv"  # a JSON line of 100 characters
        run_id = await settled(app, f"delete {path}", memory={"thread": "t-" + "long" * 30, "resource": "acme"})
        page = await open_page(browser, server, f"/#/runs/{run_id}", PHONE, is_mobile=True, has_touch=True)
        await expect(page.locator(".conversation .tool-call pre.args")).to_contain_text(path, timeout=15_000)
        await expect(page.locator(".pending form")).to_be_visible()
        assert await page_width(page) <= PHONE["width"]
        margin = await page.locator("main").evaluate(
            "m => m.getBoundingClientRect().left + parseFloat(getComputedStyle(m).paddingLeft)"
        )
        lefts: list[float] = await page.locator("dl.facts dd").evaluate_all(
            "els => els.map(e => e.getBoundingClientRect().left)"
        )
        assert lefts and min(lefts) >= margin - 0.5, (lefts, margin)  # no summary value starts outside the margin
        form_top = await page.locator(".pending form").evaluate("e => e.getBoundingClientRect().top")
        conversation_top = await page.locator(".conversation").evaluate("e => e.getBoundingClientRect().top")
        assert form_top < conversation_top  # what waits for the person comes before the conversation
        await shoot(page, "phone-run")


async def test_every_text_meets_wcag_aa_contrast_in_light_and_dark(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        for message in ("question", "choose", "ship", "delete reports/kept\u202e.csv"):
            await settled(app, message)
        done = await settled(app, "delete reports/gone.csv")
        await app.approve_tool_call("desk", run_id=done, answered_by="alice")
        await app.attach(done, follow="run").result()
        await settled(app, "plan", memory={"thread": "reports", "resource": "acme"})
        page = await open_page(browser, server, "/#/inbox", DESKTOP)
        await expect(page.locator("article.item")).to_have_count(4, timeout=15_000)
        views = {
            "inbox": ("/#/inbox", "article.item >> nth=3"),
            "run": (f"/#/runs/{done}", ".timeline .bar.tool >> nth=1"),
            "runs": ("/#/runs", "tbody tr >> nth=5"),
            "answered": ("/#/answered", ".answers-table tbody tr"),
        }
        failures = {}
        for scheme in ("light", "dark"):
            await page.emulate_media(color_scheme=scheme)
            for name, (path, ready) in views.items():
                await page.goto(f"{server.url}{path}")
                await page.locator(ready).wait_for()
                await expect(page.locator("#inbox-count")).to_have_text("4")
                if name == "run":
                    await page.get_by_text("Model steps: input, latency, tokens").click()
                    await page.locator(".steps-table details").first.locator("summary").click()
                if name == "inbox":
                    await expect(page.locator("pre .invisible")).to_have_count(1)
                found = await low_contrast(page)
                if found:
                    failures[f"{name} ({scheme})"] = found
        assert not failures, failures


LONG_WAIT_TIMELINE = """
async () => {
  const { renderTimeline } = await import("/dashboard/assets/timeline.js");
  const t0 = Date.parse("2026-01-01T10:00:00Z");
  const at = (ms) => new Date(t0 + ms).toISOString();
  const wait = 10 * 60 * 1000;
  const bar = (kind, label, from, to) => ({ kind, label, start: at(from), end: at(to), outcome: "completed", lane: 0 });
  const data = {
    runId: "synthetic", startedAt: at(0), endedAt: at(wait + 4100), now: at(wait + 5000), lanes: 1,
    bars: [
      bar("model", "model step 1", 100, 1600),
      bar("tool", "delete_file", 1700, 1900),
      bar("tool", "delete_file", wait + 1950, wait + 2100),
      bar("model", "model step 2", wait + 2150, wait + 4000),
      bar("finish", "finish", wait + 4000, wait + 4100),
    ],
    waits: [{ start: at(1900), end: at(wait + 1900), seconds: wait / 1000 }],
  };
  const holder = document.createElement("div");
  holder.id = "synthetic";
  holder.style.width = "1000px";
  holder.append(renderTimeline(data));
  document.getElementById("main").replaceChildren(holder);
}
"""


async def test_the_timeline_draws_live_waits_compresses_long_ones_keeps_bars_legible_and_zooms(
    make_app: AppFactory,
) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        run_id = await settled(app, "delete reports/waiting.csv")
        page = await open_page(browser, server, f"/#/runs/{run_id}", DESKTOP)
        live = page.locator(".timeline .tl-wait.live")
        await expect(live).to_have_count(1, timeout=15_000)  # the wait going on now is drawn
        await expect(live).to_contain_text("waiting")

        await page.evaluate(LONG_WAIT_TIMELINE)
        track = page.locator("#synthetic .timeline-track")
        box = await track.bounding_box()
        assert box is not None
        bars = await page.locator("#synthetic .bar").evaluate_all(
            "els => els.map(e => { const r = e.getBoundingClientRect(); return [e.textContent, r.left, r.right]; })"
        )
        assert len(bars) == 5
        for label, left, right in bars:
            assert right <= box["x"] + box["width"] + 0.5, (label, right)  # none past the right edge
            assert left >= box["x"] - 0.5, (label, left)
        widths = {label: right - left for label, left, right in bars}
        assert widths["model step 1"] >= 150 and widths["model step 2"] >= 150, widths  # legible, not slivers
        await expect(page.locator("#synthetic .tl-break")).to_have_count(1)  # the ten minutes drawn short
        await expect(page.locator("#synthetic .tl-wait.broken")).to_contain_text("waited 10m 0s")
        assert await page.locator("#synthetic .timeline-axis .tick:not(.broken)").count() >= 5
        canvas = page.locator("#synthetic .timeline-canvas")
        before = await canvas.evaluate("e => e.getBoundingClientRect().width")
        await page.locator("#synthetic").get_by_role("button", name="Zoom in").click()
        assert await canvas.evaluate("e => e.getBoundingClientRect().width") == 2 * before
        await page.locator("#synthetic").get_by_role("button", name="Zoom out").click()
        await shoot(page, "timeline-long-wait", page.locator("#synthetic .timeline"))
        await page.locator("#synthetic").get_by_role("button", name="Zoom in").click()
        await expect(page.locator("#synthetic .zoom-level")).to_have_text("2\u00d7")
        assert await page_width(page) <= DESKTOP["width"]  # the zoomed track scrolls inside its box


async def test_after_answering_the_focus_moves_on_the_inbox_filters_by_agent_answers_are_listed_and_one_signs_out(
    make_app: AppFactory,
) -> None:
    app = make_app([desk_agent(), desk_agent(id="quick", name="Quick desk", agents={})])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        first = await settled(app, "delete reports/first.csv")
        second = await settled(app, "delete reports/second.csv")
        quick = await settled(app, "question", "quick")
        _, page = await signed_in_page(browser, server, "tok-alice")
        for run_id in (first, second, quick):
            await expect(inbox_item(page, run_id)).to_be_visible(timeout=15_000)

        await page.get_by_label("Agent").select_option("quick")
        await expect(page.locator("article.item")).to_have_count(1)
        await expect(inbox_item(page, quick)).to_be_visible()
        await page.get_by_label("Agent").select_option("desk")
        await expect(page.locator("article.item")).to_have_count(2)

        cards = page.locator("article.item")
        top = await cards.first.get_attribute("data-run-id")
        other = second if top == first else first
        await cards.first.get_by_role("button", name="Approve").click()
        await expect(inbox_item(page, top or "")).to_have_count(0, timeout=5_000)
        focused = await page.evaluate(
            "document.activeElement.closest('article form') ? "
            "document.activeElement.closest('article').dataset.runId : null"
        )
        assert focused == other  # the focus went on to the next item's form, not to <body>
        await page.keyboard.type("checked twice")  # ... so the keyboard goes on: the reason field has it
        await expect(inbox_item(page, other).get_by_label("Reason (optional)")).to_have_value("checked twice")
        await inbox_item(page, other).get_by_role("button", name="Approve").click()
        await expect(inbox_item(page, other)).to_have_count(0, timeout=5_000)

        await page.get_by_role("link", name="Answered").click()
        rows = page.locator(".answers-table tbody tr")
        await expect(rows).to_have_count(2, timeout=15_000)
        for run_id in (first, second):
            row = page.locator(f'.answers-table tr[data-run-id="{run_id}"]')
            await expect(row.locator(".answerer")).to_have_text("alice")
            await expect(row.locator(".what")).to_have_text("approved")
            await expect(row).to_contain_text("delete_file")

        await shoot(page, "answered")
        await page.get_by_role("button", name="Sign out").click()
        await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        assert await page.evaluate("sessionStorage.getItem('tempo-agents-token')") is None


async def test_a_run_that_never_waited_shows_no_waiting_section_its_step_and_its_data_chunks_grouped(
    make_app: AppFactory,
) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        run_id = await start(app, "stamp 300")  # 300 data-stamp chunks, one every 20 ms
        page = await open_page(browser, server, f"/#/runs/{run_id}", DESKTOP)
        await expect(page.locator(".conversation .tool-call")).to_be_visible(timeout=15_000)
        await expect(page.locator(".run[data-status=running]")).to_be_visible()
        facts = page.locator("dl.facts")
        await expect(facts).to_contain_text("Step0 (running)")  # steps count from 0, as the API counts them
        await expect(facts).not_to_contain_text("Steps0")
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=30_000)
        await expect(page.get_by_role("heading", name="Waiting for people")).to_be_hidden()
        group = page.locator(".conversation details.data-group")
        await expect(group).to_have_count(1)
        await expect(group.locator("summary")).to_have_text("data-stamp \u00d7 300")
        await expect(page.locator(".conversation .data:visible")).to_have_count(0)  # folded, not 300 lines


async def test_on_a_run_page_a_form_answered_elsewhere_stays_and_says_who_and_what(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        run_id = await settled(app, "delete reports/page.csv")
        page = await open_page(browser, server, f"/#/runs/{run_id}", DESKTOP)
        waiting = page.locator(".pending .item")
        await waiting.get_by_label("Reason (optional)").fill("ask finance first", timeout=15_000)
        await app.decline_tool_call("desk", run_id=run_id, reason="duplicate", answered_by="carol")
        note = waiting.locator(".form-error.taken")
        await expect(note).to_have_text("already answered by carol: declined (\u201cduplicate\u201d)", timeout=15_000)
        await expect(waiting.get_by_label("Reason (optional)")).to_have_value("ask finance first")
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=15_000)
        await expect(note).to_be_visible()  # for good, after the run has ended
        await waiting.get_by_role("button", name="Dismiss").click()
        await expect(page.get_by_role("heading", name="Waiting for people")).to_be_hidden()
