"""The inbox as a person reads and works through it, in a real headless Chromium against a real server, worker and
Temporal: on a phone with long names, while someone else answers, after answering, with many waiting calls, and the
Answered view while many runs still wait."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Browser, Page, expect

from tempo_agents import App, ScriptedModel, ScriptedResponse, ScriptedToolCall
from tempo_agents.models.model import ModelRequest
from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory, running_worker
from tests.support.browser import TOKENS, chromium, dashboard_server, desk_agent, shoot, signed_in_page

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


def item(page: Page, run_id: str) -> Any:
    return page.locator(f'article[data-run-id="{run_id}"]')


async def open_page(browser: Browser, server: ApiServer, path: str, viewport: dict[str, int], **options: Any) -> Page:
    context = await browser.new_context(viewport=viewport, **options)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(server.url + path)
    return page


async def page_width(page: Page) -> int:
    """How wide the document is: wider than the viewport means the page scrolls sideways."""
    width: int = await page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
    return width


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
        await expect(item(page, run_id)).to_be_visible(timeout=15_000)
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
