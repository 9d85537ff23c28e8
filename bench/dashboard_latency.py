"""How late does the dashboard paint a chunk after it was journaled, how fast does its inbox paint, and does the
runs table stay responsive while many runs stream?

    python bench/dashboard_latency.py [--stamps 500] [--waiting 1000] [--runs 3] [--streaming 50] [--tabs 50]
                                      [--in-sight 1]

One embedded dev server, the example app (``examples/operations_dashboard.py``: SQLite store in a temporary
directory, its worker and its API server with the dashboard in this process) and Debian's headless Chromium
(``/usr/bin/chromium``, or ``$TEMPO_AGENTS_CHROMIUM``) driven by Playwright.

- **chunk → paint**: a run whose ``stamp`` tool writes ``--stamps`` ``data-stamp`` chunks 20 ms apart,
  each carrying the wall-clock time it was handed to the journal writer (just before the journal append: the
  figure includes the writer's batching and the append). The run page follows the run
  (``GET /api/runs/:id/stream``) and, in the first animation frame after a chunk is in the page, reports it
  (``tempo:chunk-painted``); the lag is that frame's wall-clock time minus the stamp. Stamps written before the
  page was following live (its catch-up from offset 0) are left out. ``--runs`` runs, one after another.
- **chunk → paint, many tabs**: the same with ``--tabs`` pages of one browser open on the run page of one run (a
  person with that many tabs, or a wall of screens), each following the run; the lags of every tab together, next
  to the one tab above (the ratio of the p95s), and how many tabs painted the run's chunks. ``--in-sight N`` (1, as
  in a browser window): only the last N tabs opened are in sight, the others are background tabs
  (``tests/support/browser.py``'s ``OUT_OF_SIGHT``: the Page Visibility API says hidden, as a browser says of every
  tab but the one shown in each window; headless Chromium shows every page otherwise); the lags are the tabs in
  sight's, and every background tab must draw the run and be sent its end once looked at.
- **inbox paint**: with ``--waiting`` runs waiting for a person, from navigation to the first paint of the
  inbox's first page (``tempo:inbox-painted``), on a fresh page and after a reload. Target: 1,000 ms.
- **runs table while streaming**: ``--streaming`` runs stream 150 words each, 40 ms apart, while the runs page
  switches its status filter three times and samples animation frames: the slowest filter answer (target
  2,000 ms) and the longest frame (target 500 ms).

The last line is quotable::

    dashboard_latency: chunk→paint p50=..ms p95=..ms (n=..) tabs(50, 1 in sight) p50=..ms p95=..ms ratio(p95)=..x
        painted=1/1 inbox(1000 waiting) first=..ms reload=..ms runs-table(50 streaming) filter=..ms longest-frame=..ms
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from playwright.async_api import BrowserContext, Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import bench_parser, median, out, quantile, run_as_module, start_server
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.server.serving import ApiServer
from tests.support.browser import OUT_OF_SIGHT, RUNS_TABLE_PROBE

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "operations_dashboard.py"
CHROMIUM = os.environ.get("TEMPO_AGENTS_CHROMIUM", "/usr/bin/chromium")
INBOX_TARGET_MS = 1000.0
FILTER_TARGET_MS = 2000.0
FRAME_TARGET_MS = 500.0
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
LISTEN = """
window.__lags = []; window.__stamps = []; window.__live = null;
addEventListener('tempo:chunk-painted', e => {
  const chunk = e.detail.chunk;
  if (window.__live === null) window.__live = e.detail.at + 300;  // after the catch-up from offset 0
  if (chunk.type === 'data-stamp' && chunk.data.writtenAt > window.__live) {
    window.__lags.push(e.detail.at - chunk.data.writtenAt);
    window.__stamps.push([chunk.data.writtenAt, e.detail.at - chunk.data.writtenAt]);
  }
});
addEventListener('tempo:inbox-painted', e => { window.__inbox = e.detail; });
"""


def desk() -> Agent:
    spec = importlib.util.spec_from_file_location("operations_dashboard", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["operations_dashboard"] = module
    spec.loader.exec_module(module)
    agent: Agent = module.build_desk()
    return agent


async def _ask(data: dict[str, Any], ctx: ToolContext) -> Any:
    assert ctx.suspend is not None
    if ctx.resume_data is None:
        return await ctx.suspend({"question": f"ok for {data['n']}?"})
    return ctx.resume_data


def waiting_agent() -> Agent:
    def script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("ask", {"n": request.run_id})])
        return ScriptedResponse(text="ok")

    return Agent(
        id="waiter", model=ScriptedModel(script), tools={"ask": create_tool(id="ask", description="Asks", execute=_ask)}
    )


def talker() -> Agent:
    words = " ".join(f"word{n}" for n in range(150))
    return Agent(id="talker", model=ScriptedModel([ScriptedResponse(text=words)], delta_delay=0.04))


async def many_tabs(context: BrowserContext, app: App, url: str, args: argparse.Namespace) -> tuple[list[float], int]:
    """``--tabs`` pages of one browser on the run page of one run writing four times ``--stamps`` stamps. Once every
    tab follows the run live (or after a minute), the lags of the stamps written since, in every tab, and how many
    tabs painted at least 90 % of those stamps (a tab that cannot follow the run paints none)."""
    stream = await app.agent("desk").stream(f"stamp {args.stamps * 4}")  # long enough for every tab to open first
    all_pages = [await context.new_page() for _ in range(args.tabs)]
    # Headless Chromium draws at full rate only in the page opened last (its window's active tab), whatever
    # visibilityState says: the tabs in sight are the last ones opened.
    first_in_sight = max(0, len(all_pages) - args.in_sight)
    pages, background = all_pages[first_in_sight:], all_pages[:first_in_sight]
    for page in background:
        await page.add_init_script(OUT_OF_SIGHT)
    await asyncio.gather(*(page.goto(f"{url}/#/runs/{stream.run_id}") for page in all_pages))
    live = await asyncio.gather(*(_live(page) for page in pages))
    all_live_ms = time.time() * 1000
    out(f"  {sum(live)} of {len(pages)} tabs in sight follow the run live")
    await stream.result()
    await asyncio.sleep(2.0)  # the last chunks reach the tabs
    if background:
        await _looked_at(background)
    stamps = [[(at, lag) for at, lag in await page.evaluate("window.__stamps") if at > all_live_ms] for page in pages]
    written = max((len(found) for found in stamps), default=0)
    lags = [lag for found in stamps for _, lag in found]
    painted = sum(1 for found in stamps if written and len(found) >= 0.9 * written)
    out(f"  {args.tabs} tabs on one run: {painted} painted the {written} stamps written once all were live, "
        f"p50 {median(lags):.1f} ms, p95 {quantile(lags, 0.95):.1f} ms")  # fmt: skip
    for page in all_pages:
        await page.close()
    return lags, painted


async def _looked_at(background: list[Page]) -> None:
    """What the background tabs were sent and drew of the run out of sight; each must draw it once looked at (and be
    sent its end), or this raises."""
    sent = sum([await page.evaluate("window.runEventsReceived") for page in background])
    drawn = sum([await page.evaluate("window.__live !== null") for page in background])
    await asyncio.gather(*(page.evaluate("lookAtTab()") for page in background))
    for page in background:
        await page.wait_for_function("window.__live !== null && window.streamEnded === true", timeout=60_000)
    out(f"  {len(background)} background tabs: sent {sent} events and drew in {drawn} out of sight; "
        "every one drew the run and was sent its end once looked at")  # fmt: skip


async def _live(page: Page) -> bool:
    try:
        await page.wait_for_function("window.__live !== null", timeout=60_000)
    except PlaywrightTimeoutError:
        return False
    return True


async def _main(args: argparse.Namespace) -> int:
    out(f"dashboard_latency: load average {os.getloadavg()[0]:.2f} at start")
    env = await start_server(None, stock=False)
    lags: list[float] = []
    inbox: list[float] = []
    table: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        app = App(
            agents=[desk(), waiting_agent(), talker()], client=env.client, store=f"sqlite:///{tmp}/store.db",
            task_queue=f"bench-{uuid.uuid4()}",
        )  # fmt: skip
        server = ApiServer(app, port=0)
        await server.start()
        try:
            async with app.worker(), async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                context = await browser.new_context()
                await context.add_init_script(LISTEN)
                page = await context.new_page()
                for number in range(args.runs):
                    stream = await app.agent("desk").stream(f"stamp {args.stamps}")
                    await page.goto(f"{server.url}/#/runs/{stream.run_id}")
                    await stream.result()
                    await page.wait_for_function(f"window.__lags.length >= {args.stamps} * 0.7", timeout=60_000)
                    found: list[float] = await page.evaluate("window.__lags")
                    out(f"  run {number}: {len(found)} stamps, p50 {median(found):.1f} ms, "
                        f"p95 {quantile(found, 0.95):.1f} ms")  # fmt: skip
                    lags.extend(found)
                    await page.goto("about:blank")
                tab_lags, painted = await many_tabs(context, app, server.url, args)
                began = time.monotonic()
                await asyncio.gather(*(app.agent("waiter").stream("go") for _ in range(args.waiting)))
                while (await app.list_suspended_runs(agent_id="waiter")).total < args.waiting:
                    await asyncio.sleep(0.25)
                out(f"  {args.waiting} runs waiting after {time.monotonic() - began:.1f} s")
                await page.goto(f"{server.url}/#/inbox")
                await page.wait_for_function("window.__inbox")
                inbox.append(await page.evaluate("window.__inbox.at"))
                await page.reload()
                await page.wait_for_function("window.__inbox")
                inbox.append(await page.evaluate("window.__inbox.at"))
                await page.goto(f"{server.url}/#/runs")
                streams = await asyncio.gather(*(app.agent("talker").stream("talk") for _ in range(args.streaming)))
                await page.locator("tr[data-status=running]").first.wait_for(timeout=60_000)
                table = await page.evaluate(RUNS_TABLE_PROBE)
                await asyncio.gather(*(stream.result() for stream in streams))
                await browser.close()
        finally:
            await server.stop()
            await app.store.close()
    await env.shutdown()
    out(f"dashboard_latency: load average {os.getloadavg()[0]:.2f} at end")
    out(
        f"  targets: inbox {INBOX_TARGET_MS:.0f} ms ({'met' if inbox[0] <= INBOX_TARGET_MS else 'MISSED'}), "
        f"filter {FILTER_TARGET_MS:.0f} ms ({'met' if table['filterMs'] <= FILTER_TARGET_MS else 'MISSED'}), "
        f"longest frame {FRAME_TARGET_MS:.0f} ms ({'met' if table['maxFrameGapMs'] <= FRAME_TARGET_MS else 'MISSED'})"
    )
    ratio = quantile(tab_lags, 0.95) / quantile(lags, 0.95) if tab_lags else float("nan")
    in_sight = min(args.in_sight, args.tabs)
    out(
        f"dashboard_latency: chunk→paint p50={median(lags):.1f}ms p95={quantile(lags, 0.95):.1f}ms (n={len(lags)}) "
        f"tabs({args.tabs}, {in_sight} in sight) p50={median(tab_lags):.1f}ms "
        f"p95={quantile(tab_lags, 0.95):.1f}ms ratio(p95)={ratio:.2f}x "
        f"painted={painted}/{in_sight} "
        f"inbox({args.waiting} waiting) first={inbox[0]:.0f}ms reload={inbox[1]:.0f}ms "
        f"runs-table({args.streaming} streaming) filter={table['filterMs']:.0f}ms "
        f"longest-frame={table['maxFrameGapMs']:.0f}ms"
    )
    return 0


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--stamps", type=int, default=500)
    parser.add_argument("--waiting", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--streaming", type=int, default=50)
    parser.add_argument("--tabs", type=int, default=50, help="tabs of one browser on the run page of one run")
    parser.add_argument(
        "--in-sight", type=int, default=1, help="how many of the tabs are in sight, the last opened (default: 1)"
    )
    return asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    run_as_module("dashboard_latency")
