"""Many tabs of one browser on the dashboard, in a real headless Chromium: a browser opens at most six connections to
one server over HTTP/1.1, so the tabs share their streams (the live feed, each run's stream) through one
SharedWorker. Twelve tabs on one run each show the whole run while the server streams it once; a tab that joins
late is sent what came before; closed tabs release the stream, even when they never said so (their Web Locks
tell); a browser without SharedWorker follows from each tab; a tab out of sight is sent nothing of the run until it is
looked at again, then all of it."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from playwright.async_api import BrowserContext, Page, expect

from tempo_agents import Agent, App, ScriptedResponse
from tempo_agents.server.serving import ApiServer
from tempo_agents.streams.run_tail import followers_of
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, running_worker
from tests.support.browser import OUT_OF_SIGHT, chromium, dashboard_server
from tests.support.gated_models import PausingModel

TABS = 12
WORDS = 300
HELD_AT = 10
LAST_HELD_WORD = f"w{HELD_AT - 1}"
LAST_WORD = f"w{WORDS - 1}"
NO_SHARED_WORKER = "delete window.SharedWorker;"
SILENT_CLOSE = """
const listen = window.addEventListener;
window.addEventListener = function (type, ...rest) {
  if (type !== "pagehide") return listen.call(this, type, ...rest);
};
"""
"""A tab that never says it closes (as one that crashes): only its Web Lock tells the shared worker it is gone."""


def talker() -> tuple[Agent, PausingModel]:
    """One step that streams ``WORDS`` words; it holds after the first ``HELD_AT`` until its model's gate opens, so
    the run is live for as long as a loaded machine takes to open every tab; then the rest 0.01 s apart."""
    text = " ".join(f"w{n}" for n in range(WORDS))
    model = PausingModel([ScriptedResponse(text=text)], pause_after=HELD_AT, delta_delay=0.01)
    return Agent(id="talker", model=model), model


@dataclass
class TalkingRun:
    """A ``talker`` run held mid-stream, the dashboard serving it, and a browser context to open its tabs in."""

    app: App
    model: PausingModel
    server: ApiServer
    run_id: str
    context: BrowserContext

    @property
    def page_url(self) -> str:
        return f"{self.server.url}/#/runs/{self.run_id}"


@contextlib.asynccontextmanager
async def talking_run(make_app: AppFactory) -> AsyncIterator[TalkingRun]:
    agent, model = talker()
    app = make_app([agent])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        started = await app.stream("talker", "talk")
        await started.aclose()  # the server's only followers of the run are then the tabs'
        context = await browser.new_context()
        yield TalkingRun(app, model, server, started.run_id, context)
        await context.close()


async def open_tabs(talk: TalkingRun, count: int) -> list[Page]:
    pages = [await talk.context.new_page() for _ in range(count)]
    await asyncio.gather(*(page.goto(talk.page_url) for page in pages))
    return pages


async def most_followers(app: App, run_id: str, until: asyncio.Task[None]) -> int:
    """The most streams the server had following the run at once, sampled until ``until`` is done."""
    most = 0
    while not until.done():
        most = max(most, followers_of(app.store, run_id))
        await asyncio.sleep(0.05)
    return most


async def released(app: App, run_id: str) -> bool:
    """Whether the server stops following the run within 15 s (closed tabs end the shared worker's stream)."""
    deadline = time.monotonic() + 15
    while followers_of(app.store, run_id) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return followers_of(app.store, run_id) == 0


async def all_show(pages: Sequence[Page], text: str) -> None:
    await asyncio.gather(
        *(expect(page.locator(".conversation")).to_contain_text(text, timeout=60_000) for page in pages)
    )


async def test_twelve_tabs_of_one_browser_show_one_run_streamed_once(make_app: AppFactory) -> None:
    async with talking_run(make_app) as talk:
        store, run_id = talk.app.store, talk.run_id
        pages = await open_tabs(talk, TABS)
        shown = asyncio.create_task(all_show(pages, LAST_WORD))
        sampled = asyncio.create_task(most_followers(talk.app, run_id, shown))
        await all_show(pages, LAST_HELD_WORD)  # every tab follows the run while it is held mid-stream
        assert followers_of(store, run_id) == 1  # the live run streams to every tab over one stream
        talk.model.gate.set()
        await shown  # every tab got every word, the last one included
        most = await sampled
        assert most == 1, f"{most} streams of the run for {TABS} tabs of one browser"
        late = await open_tabs(talk, 1)  # after the run: sent the whole run
        await all_show(late, "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10")
        for page in pages + late:
            await page.close()
        assert await released(talk.app, run_id)  # the closed tabs released the stream


async def test_tabs_gone_without_a_word_release_a_live_runs_stream(make_app: AppFactory) -> None:
    async with talking_run(make_app) as talk:
        await talk.context.add_init_script(SILENT_CLOSE)
        pages = await open_tabs(talk, 3)
        await all_show(pages, LAST_HELD_WORD)
        assert followers_of(talk.app.store, talk.run_id) == 1
        for page in pages:
            await page.close()  # while the run is held mid-stream
        assert await released(talk.app, talk.run_id)
        talk.model.gate.set()
        result = await talk.app.client.get_workflow_handle(talk.run_id, result_type=RunResult).result()
        assert result.finish_reason == "stop"  # the held run went on to its end once its followers had gone


async def test_a_browser_without_shared_workers_follows_from_each_tab(make_app: AppFactory) -> None:
    async with talking_run(make_app) as talk:
        await talk.context.add_init_script(NO_SHARED_WORKER)
        pages = await open_tabs(talk, 2)
        await all_show(pages, LAST_HELD_WORD)
        assert followers_of(talk.app.store, talk.run_id) == 2  # a connection each, as before
        talk.model.gate.set()
        await all_show(pages, LAST_WORD)


async def test_tabs_out_of_sight_are_sent_the_run_when_looked_at_again(make_app: AppFactory) -> None:
    async with talking_run(make_app) as talk:
        in_sight, away, looked_away = [await talk.context.new_page() for _ in range(3)]
        for page in (away, looked_away):
            await page.add_init_script(OUT_OF_SIGHT)  # out of sight from the start
        await asyncio.gather(*(page.goto(talk.page_url) for page in (in_sight, away, looked_away)))
        await looked_away.evaluate("lookAtTab()")
        await all_show([in_sight, looked_away], LAST_HELD_WORD)
        await looked_away.evaluate("lookAway()")  # mid-run
        seen_before = await looked_away.evaluate("window.runEventsReceived")
        talk.model.gate.set()
        await all_show([in_sight], LAST_WORD)  # the shared stream has carried the whole run
        assert await away.evaluate("window.runEventsReceived") == 0  # the shared worker kept the run for it
        assert "w0" not in await away.locator(".conversation").inner_text()  # and it drew none of it
        assert await looked_away.evaluate("window.runEventsReceived") == seen_before  # nothing since it looked away
        whole = " ".join(f"w{n}" for n in range(WORDS))
        for page in (away, looked_away):
            await page.evaluate("lookAtTab()")
            await all_show([page], whole)
            words = re.findall(r"\bw\d+\b", await page.locator(".conversation").inner_text())
            assert words == [f"w{n}" for n in range(WORDS)]  # every word once, in order
