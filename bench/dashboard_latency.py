"""How late does the dashboard paint a chunk after it was journaled, and how fast does its inbox paint?

    python bench/dashboard_latency.py [--stamps 500] [--waiting 1000] [--runs 3]

One embedded dev server, the example app (``examples/operations_dashboard.py``: SQLite store in a temporary
directory, its worker and its API server with the dashboard in this process) and Debian's headless Chromium
(``/usr/bin/chromium``, or ``$TEMPO_AGENTS_CHROMIUM``) driven by Playwright.

- **chunk → paint**: a run whose ``stamp`` tool writes ``--stamps`` ``data-stamp`` chunks 20 ms apart,
  each carrying the wall-clock time it was handed to the journal writer (just before the journal append: the
  figure includes the writer's batching and the append). The run page follows the run
  (``GET /api/runs/:id/stream``) and, in the first animation frame after a chunk is in the page, reports it
  (``tempo:chunk-painted``); the lag is that frame's wall-clock time minus the stamp. Stamps written before the
  page was following live (its catch-up from offset 0) are left out. ``--runs`` runs, one after another.
- **inbox paint**: with ``--waiting`` runs waiting for a person, from navigation to the first paint of the
  inbox's first page (``tempo:inbox-painted``), on a fresh page and after a reload.

The last line is quotable::

    dashboard_latency: chunk→paint p50=..ms p95=..ms (n=..) inbox(1000 waiting) first=..ms reload=..ms
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

from playwright.async_api import async_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import bench_parser, median, out, quantile, run_as_module, start_server
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.server.serving import ApiServer

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "operations_dashboard.py"
CHROMIUM = os.environ.get("TEMPO_AGENTS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
LISTEN = """
window.__lags = []; window.__live = null;
addEventListener('tempo:chunk-painted', e => {
  const chunk = e.detail.chunk;
  if (window.__live === null) window.__live = e.detail.at + 300;  // after the catch-up from offset 0
  if (chunk.type === 'data-stamp' && chunk.data.writtenAt > window.__live) {
    window.__lags.push(e.detail.at - chunk.data.writtenAt);
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


async def _main(args: argparse.Namespace) -> int:
    out(f"dashboard_latency: load average {os.getloadavg()[0]:.2f} at start")
    env = await start_server(None, stock=False)
    lags: list[float] = []
    inbox: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        app = App(
            agents=[desk(), waiting_agent()], client=env.client, store=f"sqlite:///{tmp}/store.db",
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
                await browser.close()
        finally:
            await server.stop()
            await app.store.close()
    await env.shutdown()
    out(f"dashboard_latency: load average {os.getloadavg()[0]:.2f} at end")
    out(
        f"dashboard_latency: chunk→paint p50={median(lags):.1f}ms p95={quantile(lags, 0.95):.1f}ms (n={len(lags)}) "
        f"inbox({args.waiting} waiting) first={inbox[0]:.0f}ms reload={inbox[1]:.0f}ms"
    )
    return 0


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--stamps", type=int, default=500)
    parser.add_argument("--waiting", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    return asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    run_as_module("dashboard_latency")
