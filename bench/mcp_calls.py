"""What an MCP tool call costs: one connection per call (what ``mcp_tools`` does) next to one kept session.

    python bench/mcp_calls.py [--calls 30]

Starts the tests' MCP server (tests/mcp_servers/inventory.py, written with the mcp SDK) over streamable HTTP on
127.0.0.1, and over stdio as a command. For each transport:

- listing: how long ``list_mcp_tools`` takes (connect, handshake, ``tools/list``, close): once per App build;
- tool call: ``--calls`` calls of ``inventory_stock`` through the tool's ``execute`` (validation, its own
  connection, the call, close), p50 and p95: what a tool-call activity adds to a call on top of its own cost;
- kept session (baseline): the same calls over one open ``mcp.Client`` session.

The last lines are quotable, one per transport::

    mcp: http call p50=..ms (kept session ..ms), stdio call p50=..ms (kept session ..ms)
"""

from __future__ import annotations

import argparse
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

from bench._common import median, out, quantile
from tempo_agents.mcp import list_mcp_tools
from tempo_agents.worker.dev_server import free_port

SERVER = Path(__file__).parent.parent / "tests" / "mcp_servers" / "inventory.py"


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


async def measure(label: str, source: str | list[str], calls: int) -> tuple[float, float]:
    start = time.perf_counter()
    tools = await list_mcp_tools(source)
    listing = (time.perf_counter() - start) * 1000
    stock = tools["inventory_stock"]
    per_call = await timed(calls, lambda: stock.execute({"item": "apples"}))
    target = source if isinstance(source, str) else StdioServerParameters(command=source[0], args=source[1:])
    async with Client(target, cache=None) as session:
        kept = await timed(calls, lambda: session.call_tool("stock", {"item": "apples"}))
    p50, p95 = median(per_call), quantile(per_call, 0.95)
    kept_p50 = median(kept)
    call = f"call p50 {p50:7.1f} ms  p95 {p95:7.1f} ms"
    out(f"{label:6} listing {listing:7.1f} ms   {call}   kept session p50 {kept_p50:6.1f} ms")
    return median(per_call), median(kept)


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
    out(
        f"mcp: http call p50={http[0]:.1f}ms (kept session {http[1]:.1f}ms), "
        f"stdio call p50={stdio[0]:.1f}ms (kept session {stdio[1]:.1f}ms)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=30)
    return asyncio.run(bench(parser.parse_args(argv).calls))


if __name__ == "__main__":
    sys.exit(main())
