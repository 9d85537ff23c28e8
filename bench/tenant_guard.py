"""What the access guard costs a request: a token holder who is an admin everywhere next to one who holds a role in
one tenant (whose requests look the run's tenant up), in the same run on the same server.

    python bench/tenant_guard.py [--requests 300] [--db-file PATH] [--stock-server]

One embedded dev server, one App whose worker runs in this process, and its HTTP API (``ApiServer``) with two
tokens: ``everywhere`` (``{"*": ["admin"]}``) and ``tenant`` (``{"acme": ["viewer"]}``). One run in acme; then
``--requests`` sequential ``GET /api/runs/:id/tasks`` per token, and as many ``GET /api/runs`` (a listing, filtered
in the query for the tenant's token).

The last line is quotable::

    tenant_guard: run read p50 everywhere=..ms tenant=..ms listing p50 everywhere=..ms tenant=..ms
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import add_dev_server_arguments, bench_parser, busy_warning, median, out, run_as_module, start_server
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.server.serving import ApiServer

TOKENS = {"tok-everywhere": "everywhere", "tok-tenant": "tenant"}
ROLES = {"everywhere": {"*": ["admin"]}, "tenant": {"acme": ["viewer"]}}


async def _timed(http: httpx.AsyncClient, path: str, token: str, count: int) -> list[float]:
    headers = {"Authorization": f"Bearer {token}"}
    times = []
    for _ in range(count):
        began = time.perf_counter()
        answer = await http.get(path, headers=headers)
        times.append((time.perf_counter() - began) * 1000)
        assert answer.status_code == 200, answer.text
    return times


async def _main(args: argparse.Namespace) -> int:
    load = os.getloadavg()[0]
    out(f"tenant_guard: load average {load:.2f} at start" + (busy_warning() if load > 0.5 else ""))
    env = await start_server(args.db_file, stock=args.stock_server)
    with tempfile.TemporaryDirectory() as scratch:
        agent = Agent(id="quick", instructions="", model=ScriptedModel(lambda r: ScriptedResponse(text="ok")))
        app = App(agents=[agent], store=f"sqlite:///{scratch}/store.db", client=env.client, task_queue="bench-guard")
        server = ApiServer(app, port=0, tokens=TOKENS, roles=ROLES)
        await server.start()
        try:
            async with app.worker(), httpx.AsyncClient(base_url=server.url, timeout=60) as http:
                memory = {"thread": "t", "resource": "acme"}
                done = await http.post(
                    "/api/agents/quick/generate",
                    json={"messages": "hi", "memory": memory},
                    headers={"Authorization": "Bearer tok-everywhere"},
                )
                run = f"/api/runs/{done.json()['runId']}/tasks"
                for token in TOKENS:  # warm-up
                    await _timed(http, run, token, 10)
                reads = {token: median(await _timed(http, run, token, args.requests)) for token in TOKENS}
                lists = {token: median(await _timed(http, "/api/runs", token, args.requests)) for token in TOKENS}
        finally:
            await server.stop()
            await env.shutdown()
    out(
        f"tenant_guard: run read p50 everywhere={reads['tok-everywhere']:.2f}ms tenant={reads['tok-tenant']:.2f}ms "
        f"listing p50 everywhere={lists['tok-everywhere']:.2f}ms tenant={lists['tok-tenant']:.2f}ms"
    )
    return 0


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--requests", type=int, default=300)
    add_dev_server_arguments(parser)
    return asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    run_as_module("tenant_guard")
