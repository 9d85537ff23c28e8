"""Playwright for Python driving Debian's Chromium (no browser download), and the dashboard's served App.

``scripts/_system_packages.sh`` installs ``chromium`` when it is missing; ``TEMPO_AGENTS_CHROMIUM`` points at
another binary.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect

from tempo_agents import Agent, App
from tempo_agents.server.serving import ApiServer
from tests.support.examples import EXAMPLES, example_module

CHROMIUM = os.environ.get("TEMPO_AGENTS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EXPECT_TIMEOUT_MS = 15_000
"""How long an ``expect`` waits for the page to show something. An action that goes through the server and Temporal
(pause a schedule, answer a call) shows on the page in well under a second on a quiet machine and took past
Playwright's default 5 s with the suite and other work sharing two cores; the page must still show it."""
expect.set_options(timeout=EXPECT_TIMEOUT_MS)
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
"""Where the tests write the screenshots the README shows."""
TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}
EXAMPLE = EXAMPLES / "operations_dashboard.py"
OUT_OF_SIGHT = """
let hidden = true;
Object.defineProperty(document, "hidden", { get: () => hidden, configurable: true });
Object.defineProperty(document, "visibilityState", { get: () => (hidden ? "hidden" : "visible"), configurable: true });
window.lookAtTab = () => {
  hidden = false;
  document.dispatchEvent(new Event("visibilitychange"));
};
window.lookAway = () => {
  hidden = true;
  document.dispatchEvent(new Event("visibilitychange"));
};
window.runEventsReceived = 0;
window.streamEnded = false;
const SharedWorkerOfTheBrowser = window.SharedWorker;
window.SharedWorker = function (...args) {
  const worker = new SharedWorkerOfTheBrowser(...args);
  worker.port.addEventListener("message", ({ data }) => {
    if (data.type === "event" && data.eventId !== null) window.runEventsReceived += 1;
    if (data.type === "state" && data.state === "done") window.streamEnded = true;
  });
  return worker;
};
"""
"""A page's init script that makes it a tab out of sight (a background tab, a minimised window), as the Page
Visibility API tells a page, until ``lookAtTab()`` (and again after ``lookAway()``): headless Chromium shows every
page. It counts the events of a run's stream the shared worker sends the tab (``runEventsReceived``: the live
feed's have no id) and notes a stream's end sent to it (``streamEnded``)."""
RUNS_TABLE_PROBE = """async () => {
    const gaps = [];
    let last = performance.now();
    let sampling = true;
    const frame = (now) => {
        gaps.push(now - last);
        last = now;
        if (sampling) requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    const section = document.querySelector('.runs');
    const select = document.getElementById(document.querySelector('label[for^=status]').htmlFor);
    const filterTimes = [];
    for (const status of ['running', '', 'running']) {
        const before = section.dataset.loadedAt;
        const t0 = performance.now();
        select.value = status;
        select.dispatchEvent(new Event('change'));
        while (section.dataset.loadedAt === before) await new Promise(r => setTimeout(r, 5));
        filterTimes.push(performance.now() - t0);
        await new Promise(r => setTimeout(r, 500));
    }
    sampling = false;
    return { filterMs: Math.max(...filterTimes), maxFrameGapMs: Math.max(...gaps), frames: gaps.length };
}"""
"""Run in the runs page: switches the status filter three times (running, all, running), waiting each time for the
table to reload, while sampling animation frames. Answers ``{filterMs, maxFrameGapMs, frames}``: the slowest filter
answer and the longest frame gap."""


def desk_agent(**overrides: Any) -> Agent:
    """The example app's ``desk`` agent (a new one: an agent belongs to one App)."""
    agent: Agent = example_module("operations_dashboard.py").build_desk(**overrides)
    return agent


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """A headless Chromium."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"no Chromium at {CHROMIUM}: apt-get install chromium (scripts/_system_packages.sh does)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def dashboard_server(app: App, tokens: dict[str, str] | None = None) -> AsyncIterator[ApiServer]:
    """The App's API server (and dashboard) on a free loopback port."""
    server = ApiServer(app, port=0, tokens=tokens, temporal_ui_url="http://127.0.0.1:8233")
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def signed_in_page(
    browser: Browser,
    server: ApiServer,
    token: str | None,
    *,
    path: str = "/#/inbox",
    color_scheme: Literal["light", "dark"] = "light",
    **options: Any,
) -> tuple[BrowserContext, Page]:
    """A page of its own browser context (its own session storage) on ``path``, signed in with ``token``."""
    context = await browser.new_context(viewport={"width": 1280, "height": 860}, color_scheme=color_scheme, **options)
    page = await context.new_page()
    await page.goto(server.url + path)
    if token is not None:
        await page.get_by_label("API token").fill(token)
        await page.get_by_role("button", name="Sign in").click()
        await page.get_by_text(f"Signed in as {TOKENS[token]}").wait_for()
    return context, page


async def shoot(page: Page, name: str, target: Any = None) -> None:
    """A light and a dark screenshot of ``target`` (or the whole page)."""
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await page.wait_for_timeout(100)
        shot = await page.screenshot(full_page=True) if target is None else await target.screenshot()
        write_screenshot(f"{name}-{scheme}.png", shot)
    await page.emulate_media(color_scheme="light")


def write_screenshot(name: str, shot: bytes) -> None:
    """Write ``shot`` into :data:`SCREENSHOTS` whole or not at all: a site built while the tests run copies either the
    old picture or the new one, never half of one."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    partial = SCREENSHOTS / f".{name}.{os.getpid()}.partial"
    partial.write_bytes(shot)
    os.replace(partial, SCREENSHOTS / name)


def inbox_item(page: Page, run_id: str) -> Any:
    """The inbox's card of a run."""
    return page.locator(f'article[data-run-id="{run_id}"]')


async def open_page(browser: Browser, server: ApiServer, path: str, viewport: dict[str, int], **options: Any) -> Page:
    """A page of the dashboard in a context of its own (another person, another screen)."""
    context = await browser.new_context(viewport=viewport, **options)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(server.url + path)
    return page


async def page_width(page: Page) -> int:
    """How wide the document is: wider than the viewport means the page scrolls sideways."""
    width: int = await page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
    return width
