"""What an MCP tool call costs over the session a worker keeps, over a connection of its own, and bare.

    python bench/mcp_calls.py [--calls 30]

Starts the tests' MCP server (tests/support/mcp_servers/inventory.py, written with the mcp SDK) over streamable HTTP on
127.0.0.1, and over stdio as a command. For each transport:

- listing: how long ``list_mcp_tools`` takes (connect, handshake, ``tools/list``, close): once per App build;
- call, kept session: ``--calls`` calls of ``inventory_stock`` through the tool's ``execute`` (input validation,
  the session ``mcp_tools`` keeps, the call), p50 and p95: what a tool-call activity adds to the tool's own time;
- call, own connection: the same with ``keep_session=False`` (connect, call, close: a process per call for stdio);
- bare SDK session (baseline): the same calls over one open ``mcp.Client`` session, no tempo-agents.

The last lines are quotable, one per transport::

    mcp: http call p50=..ms kept session, ..ms own connection, ..ms bare SDK
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench._common, from any directory

from bench._common import bench_parser, median, out, quantile
from tempo_agents.mcp import list_mcp_tools
from tempo_agents.worker.dev_server import free_port

SERVER = Path(__file__).parent.parent / "tests" / "support" / "mcp_servers" / "inventory.py"


def accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def timed(calls: int, call: Callable[[], Awaitable[object]]) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        times.append((time.perf_counter() - start) * 1000)
    return times


async def measure(label: str, source: str | list[str], calls: int) -> tuple[float, float, float]:
    start = time.perf_counter()
    kept_tools = await list_mcp_tools(source)
    listing = (time.perf_counter() - start) * 1000
    own_tools = await list_mcp_tools(source, keep_session=False)
    kept_stock, own_stock = kept_tools["inventory_stock"], own_tools["inventory_stock"]
    kept = await timed(calls, lambda: kept_stock.execute({"item": "apples"}))
    own = await timed(calls, lambda: own_stock.execute({"item": "apples"}))
    target = source if isinstance(source, str) else StdioServerParameters(command=source[0], args=source[1:])
    async with Client(target, cache=None) as session:
        bare = await timed(calls, lambda: session.call_tool("stock", {"item": "apples"}))
    out(
        f"{label:6} listing {listing:7.1f} ms | call, kept session: p50 {median(kept):6.1f} ms p95 "
        f"{quantile(kept, 0.95):6.1f} ms | own connection: p50 {median(own):7.1f} ms p95 {quantile(own, 0.95):7.1f} ms"
        f" | bare SDK session: p50 {median(bare):5.1f} ms"
    )
    return median(kept), median(own), median(bare)


async def bench(calls: int) -> int:
    out(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs); {calls} calls per transport")
    port = free_port()
    server = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not accepts(port):
            if time.monotonic() > deadline:
                raise RuntimeError("the MCP server did not start")
            await asyncio.sleep(0.05)
        http = await measure("http", f"http://127.0.0.1:{port}/mcp", calls)
        stdio = await measure("stdio", [sys.executable, str(SERVER)], calls)
    finally:
        server.kill()
        server.wait()
    out(f"load average at end: {os.getloadavg()[0]:.2f}")
    for label, (kept, own, bare) in (("http", http), ("stdio", stdio)):
        out(f"mcp: {label} call p50={kept:.1f}ms kept session, {own:.1f}ms own connection, {bare:.1f}ms bare SDK")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--calls", type=int, default=30)
    return asyncio.run(bench(parser.parse_args(argv).calls))


if __name__ == "__main__":
    sys.exit(main())
