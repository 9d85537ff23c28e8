"""A small MCP server for the tests: ``python -m tests.support.mcp_servers.inventory stdio`` or ``... http PORT``.

Its tools: ``stock`` (an item's count, structured output), ``shout`` (text), ``fail`` (an MCP tool error),
``find.item`` (a name the client has to sanitise) and ``pid`` (which process answers).
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("inventory", log_level="WARNING")

STOCK = {"apples": 12, "pears": 0}


@server.tool(description="How many of an item are in stock")
def stock(item: str) -> dict[str, int | str]:
    return {"item": item, "count": STOCK.get(item, 0)}


@server.tool(description="Upper-cases a text")
def shout(text: str) -> str:
    return text.upper()


@server.tool(description="Always fails")
def fail(reason: str) -> str:
    raise ToolError(f"the warehouse is closed: {reason}")


@server.tool(name="find.item", description="Finds an item by name")
def find_item(name: str) -> str:
    return f"{name} is in aisle 3"


@server.tool(description="The server's process id")
def pid() -> int:
    return os.getpid()


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
