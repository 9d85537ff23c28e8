"""The dashboard under load, in a real headless Chromium: an inbox of 1,000 waiting runs, and the runs table while
50 runs stream at once. The figures are printed (``pytest -s`` shows them)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from playwright.async_api import expect

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker
from tests.support.browser import chromium, dashboard_server, signed_in_page

WAITING = 1000
STREAMING = 50
PAINTED = "addEventListener('tempo:inbox-painted', e => { window.__inbox = e.detail; })"


async def ask(data: dict[str, Any], ctx: ToolContext) -> Any:
    assert ctx.suspend is not None
    if ctx.resume_data is None:
        return await ctx.suspend({"question": f"May I file expense report {data['n']}?"})
    return ctx.resume_data


def waiting_agent() -> Agent:
    def script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("approve_expense", {"n": request.run_id})])
        return ScriptedResponse(text="Filed.")

    tool = create_tool(id="approve_expense", description="Asks before filing", execute=ask)
    return Agent(id="clerk", model=ScriptedModel(script), tools={"approve_expense": tool})


async def test_the_inbox_of_a_thousand_waiting_runs_renders_in_under_a_second(make_app: AppFactory) -> None:
    app = make_app([waiting_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        began = time.monotonic()
        await asyncio.gather(*(app.agent("clerk").stream("file", run_id=f"expense-{n}") for n in range(WAITING)))
        for _ in range(1200):
            if (await app.list_suspended_runs(agent_id="clerk")).total == WAITING:
                break
            await asyncio.sleep(0.25)
        assert (await app.list_suspended_runs(agent_id="clerk")).total == WAITING
        print(f"\n{WAITING} runs started and waiting in {time.monotonic() - began:.1f} s")

        context = await browser.new_context(viewport={"width": 1280, "height": 860})
        await context.add_init_script(PAINTED)
        page = await context.new_page()
        figures = []
        for visit in ("first visit", "reload"):
            if visit == "reload":
                await page.reload()
            else:
                await page.goto(server.url + "/#/inbox")
            await page.wait_for_function("window.__inbox")
            painted: dict[str, Any] = await page.evaluate("window.__inbox")
            figures.append(painted["at"])
            print(
                f"inbox with {WAITING} waiting runs, {visit}: painted {painted['at']:.0f} ms after navigation "
                f"({painted['items']} items; the page's own request and render {painted['loadMs']:.0f} ms)"
            )
        await expect(page.get_by_text(f"{WAITING} waiting runs")).to_be_visible()
        await expect(page.locator("article.item")).to_have_count(25)
        assert figures[0] < 1000, f"the inbox took {figures[0]:.0f} ms to paint"
        await page.get_by_role("button", name="Older").click()
        await expect(page.locator("article.item")).to_have_count(25)
        await context.close()


async def test_the_runs_table_stays_responsive_while_fifty_runs_stream(make_app: AppFactory) -> None:
    words = " ".join(f"word{n}" for n in range(150))
    streamer = Agent(id="talker", model=ScriptedModel([ScriptedResponse(text=words)], delta_delay=0.04))
    app = make_app([streamer])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        _, page = await signed_in_page(browser, server, None, path="/#/runs")
        streams = await asyncio.gather(*(app.agent("talker").stream("talk") for _ in range(STREAMING)))
        await expect(page.locator("tr[data-status=running]").first).to_be_visible(timeout=15_000)
        measured: dict[str, float] = await page.evaluate(
            """async () => {
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
        )
        async with httpx.AsyncClient(base_url=server.url) as http:
            listed = (await http.get("/api/runs", params={"status": "running", "agent": "talker"})).json()
        still_streaming = listed["total"]
        print(
            f"\nruns table while {STREAMING} runs stream ({still_streaming} still streaming at the end): filter "
            f"answered in at most {measured['filterMs']:.0f} ms, longest frame {measured['maxFrameGapMs']:.0f} ms "
            f"over {measured['frames']} frames"
        )
        assert still_streaming > 0, "the runs ended before the measurement did"
        assert measured["filterMs"] < 2000
        assert measured["maxFrameGapMs"] < 500
        await expect(page.locator("tbody tr")).to_have_count(25)
        results = await asyncio.gather(*(stream.result() for stream in streams))
        assert {result.text for result in results} == {words}
