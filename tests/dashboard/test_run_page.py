"""A run's page as the person who must decide reads it, in a real headless Chromium against a real server, worker
and Temporal: the decision comes first and says its question once, on a desktop and on a phone; a cancelled run
leaves no line saying it waits; the timeline's axis after a long wait has distinct labels, and a bar too short for
its label shows it beside the bar or in its tooltip, never cut to a stub."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Browser, Page, expect

from tempo_agents import App
from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory, running_worker
from tests.support.browser import chromium, dashboard_server, desk_agent, shoot, write_screenshot

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}


def memory(thread: str) -> dict[str, str]:
    """A thread of its own (one run at a time on a thread) and a resource: the run has seven budget counters."""
    return {"thread": thread, "resource": "acme"}


async def settled(app: App, message: str, **options: Any) -> str:
    """Start a run of ``desk`` and return its id once its first segment ended (it waits, or it finished)."""
    stream = await app.agent("desk").stream(message, **options)
    await stream.result()
    return stream.run_id


async def run_page(browser: Browser, server: ApiServer, run_id: str, viewport: dict[str, int]) -> Page:
    """The run's page, loaded: its waiting call's form, its conversation's call and its budget are shown."""
    phone = viewport is PHONE
    context = await browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(f"{server.url}/#/runs/{run_id}")
    await expect(page.locator(".pending form")).to_be_visible(timeout=15_000)
    await expect(page.locator(".conversation .tool-call")).to_have_count(1, timeout=15_000)
    await expect(page.locator("section.budget")).to_be_visible(timeout=15_000)
    await expect(page.locator(".timeline .bar").first).to_be_visible(timeout=15_000)
    return page


async def first_screen(page: Page, name: str) -> None:
    """A light and a dark screenshot of what the window shows before any scrolling."""
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await page.wait_for_timeout(100)
        write_screenshot(f"{name}-{scheme}.png", await page.screenshot())
    await page.emulate_media(color_scheme="light")


async def shown_text(page: Page) -> str:
    """What a person sees of the page: its rendered text (nothing folded away or hidden)."""
    text: str = await page.locator("main").inner_text()
    return text


async def test_the_decision_comes_first_and_its_question_is_said_once(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        question = await settled(app, "question", memory=memory("bookings"))
        approval = await settled(app, "delete reports/q1.csv", memory=memory("reports"))
        shipping = await settled(app, "ship", memory=memory("orders"))
        asked = {
            question: "Which city should I book?",
            approval: '"path": "reports/q1.csv"',
            shipping: "Where and how should this order ship?",
        }
        for viewport in (DESKTOP, PHONE):
            for run_id, words in asked.items():
                page = await run_page(browser, server, run_id, viewport)
                where = f"{run_id} at {viewport}"
                form = page.locator(".pending form")
                first = form.locator("button, input, textarea, select").first  # what the person acts on first
                box = await first.bounding_box()
                assert box is not None and box["y"] + box["height"] <= viewport["height"], (where, box)
                answer = form.locator("button.primary, button.choice").first  # the button that answers
                box = await answer.bounding_box()
                assert box is not None and box["y"] + box["height"] <= viewport["height"], (where, box)
                assert (await shown_text(page)).count(words) == 1, where  # the card says it; nothing repeats it
                await expect(page.locator(".budget-table")).to_be_hidden()  # no limits: one line, not 7 rows
                await expect(page.locator("section.budget")).to_contain_text("No limits")
                steer_top = await page.locator("form.steer").evaluate("e => e.getBoundingClientRect().top")
                conversation_top = await page.locator(".conversation").evaluate("e => e.getBoundingClientRect().top")
                assert steer_top > conversation_top, where  # "Send to the run" comes after what the run did
                if run_id == shipping and viewport is PHONE:
                    await first_screen(page, "phone-run-shipping")
                await page.context.close()


async def test_a_cancelled_run_says_nothing_waits_live_and_after_a_reload(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        for message in ("question", "delete reports/q1.csv"):
            run_id = await settled(app, message)
            page = await run_page(browser, server, run_id, DESKTOP)
            conversation = page.locator(".conversation")
            await expect(conversation).to_contain_text("waiting for")  # before: the call waits, and says so
            await page.get_by_role("button", name="Cancel run…").click()
            await page.get_by_role("button", name="Cancel run", exact=True).click()
            await expect(conversation).to_contain_text("The run was cancelled", timeout=15_000)
            await expect(page.locator(".run[data-status=cancelled]")).to_be_visible(timeout=15_000)
            assert "waiting for" not in await conversation.inner_text(), message  # live
            await page.reload()
            await expect(conversation).to_contain_text("The run was cancelled", timeout=15_000)
            await expect(page.locator(".conversation .tool-call .tool-state")).to_have_text("cancelled")
            assert "waiting for" not in await conversation.inner_text(), message  # read again from the journal
            await page.context.close()


AFTER_A_LONG_WAIT = """
async (width) => {
  const { renderTimeline } = await import("/dashboard/assets/timeline.js");
  const t0 = Date.parse("2026-01-01T10:00:00Z");
  const at = (ms) => new Date(t0 + ms).toISOString();
  const bar = (kind, label, from, to) => ({ kind, label, start: at(from), end: at(to), outcome: "completed", lane: 0 });
  const data = {
    runId: `after-a-long-wait-${width}`, startedAt: at(0), endedAt: at(116_400), now: at(116_400), lanes: 1,
    bars: [  // a question asked, a wait of nearly two minutes, then short calls and steps
      bar("model", "model step 1", 100, 1500),
      bar("tool", "ask_user", 1550, 1600),
      bar("tool", "ask_user", 115_000, 115_040),
      bar("model", "model step 2", 115_050, 115_700),
      bar("tool", "delete_file", 115_720, 115_760),
      bar("model", "model step 3", 115_780, 116_300),
      bar("finish", "finish", 116_300, 116_350),
    ],
    waits: [{ start: at(1600), end: at(115_000), seconds: 113.4 }],
  };
  const holder = document.createElement("div");
  holder.className = "synthetic";
  holder.style.width = `${width}px`;
  holder.append(renderTimeline(data));
  document.getElementById("main").append(holder);
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  };
  const shown = (el) => getComputedStyle(el).visibility === "visible" && el.getBoundingClientRect().width > 2;
  const ticks = [...holder.querySelectorAll(".timeline-axis .tick")].filter(shown);
  return {
    ticks: ticks.map((t) => ({ text: t.textContent, broken: t.classList.contains("broken"), ...box(t) })),
    bars: [...holder.querySelectorAll(".bar")].map((b) => {
      const label = b.querySelector("span");
      const size = { need: label.scrollWidth, has: label.clientWidth };
      return { label: label.textContent, title: b.title, shown: shown(label), ...size, bar: box(b), text: box(label) };
    }),
  };
}
"""


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether two boxes on the page cover some of the same ground."""
    return (
        a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


async def test_after_a_long_wait_the_axis_labels_differ_and_no_bar_label_is_cut_to_a_stub(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        context = await browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
        page = await context.new_page()
        await page.goto(f"{server.url}/#/runs")
        await expect(page.locator("main h1")).to_be_visible(timeout=15_000)
        await page.locator("main").evaluate("m => m.replaceChildren()")
        for width in (1000, 340):  # a desktop's timeline and a phone's
            drawn: dict[str, Any] = await page.evaluate(AFTER_A_LONG_WAIT, width)
            labels = [tick["text"] for tick in drawn["ticks"] if not tick["broken"]]
            assert len(labels) >= 3 and len(set(labels)) == len(labels), (width, labels)  # one time, one label
            for n, first in enumerate(drawn["ticks"]):
                for second in drawn["ticks"][n + 1 :]:
                    assert not overlap(first, second), (width, first, second)  # none written over another
            for bar in drawn["bars"]:
                assert bar["label"] in bar["title"], bar  # the whole label, in the tooltip
                if not bar["shown"]:
                    continue
                cut = bar["need"] > bar["has"] + 1
                chars = len(bar["label"]) * min(bar["has"], bar["need"]) / bar["need"]
                assert not cut or chars >= 6, (width, bar)  # never "as…" or "d…"
                for other in drawn["bars"]:
                    if other is not bar:
                        assert not overlap(bar["text"], other["bar"]), (width, bar, other)  # beside, not over
        await shoot(page, "timeline-after-a-long-wait", page.locator(".synthetic").first)
