"""Turning an MCP server's tools into tempo-agents tools.

The server is asked for its tools once, when :func:`mcp_tools` is called (the worker does it when it imports the
App, and so does a client that builds the same App). Each call of one of these tools is an ordinary tool-call
activity; it reaches the server over the session its worker keeps (``_session.py``), or over a connection of its
own. Nothing of the connection is in workflow state, so a restarted server or worker needs nothing special.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import mcp_types
from mcp import MCPError

from tempo_agents.activity_options import ActivityOptions
from tempo_agents.agent.naming import sanitize_tool_name, sanitize_tool_names
from tempo_agents.errors import ConfigurationError
from tempo_agents.mcp._server import (
    McpServer,
    McpServerSource,
    McpServerUnavailableError,
    McpToolError,
    connection_lost,
    reason,
)
from tempo_agents.mcp._session import KeptSession
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.tool import Tool, create_tool

__all__ = ["DEFAULT_IDLE_SECONDS", "DEFAULT_TIMEOUT_SECONDS", "list_mcp_tools", "mcp_tools"]

DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_IDLE_SECONDS = 300.0


def mcp_tools(
    server: McpServerSource,
    *,
    prefix: str | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    activity: ActivityOptions | None = None,
    keep_session: bool = True,
    idle_seconds: float = DEFAULT_IDLE_SECONDS,
) -> dict[str, Tool]:
    """The tools of an MCP server, keyed by their model-visible names, ready for ``Agent(tools=...)``.

    ``server`` is a streamable HTTP URL, a command started over stdio (``["python", "server.py"]`` or one string),
    or the SDK's ``StdioServerParameters``. Each name is ``<prefix>_<tool name>`` sanitised like every tool key
    (``[a-zA-Z0-9_-]``, at most 63 characters); ``prefix`` defaults to the name the server gives itself. Input
    schemas are the server's. A call's result is the tool's structured content when it has one, else its text
    (content blocks that are not text come as a list of blocks). An error the server reports, or a server that
    cannot be reached during a call, is a tool error the model sees. ``timeout_seconds`` bounds each request to
    the server; ``activity`` sets the calls' activity options.

    Calls on one worker share a session they keep open (``keep_session``; it closes after ``idle_seconds`` without
    a call and is reopened when it broke, a call that found it stale being sent once more on a new one). With
    ``keep_session=False`` every call opens a connection of its own and closes it (a process per call for stdio).

    The server is listed now, so this blocks while it answers (inside a running event loop it lists from a
    helper thread); a server that cannot be reached raises :class:`McpServerUnavailableError`.
    """
    coroutine = list_mcp_tools(
        server,
        prefix=prefix,
        timeout_seconds=timeout_seconds,
        activity=activity,
        keep_session=keep_session,
        idle_seconds=idle_seconds,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-tools") as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def list_mcp_tools(
    server: McpServerSource,
    *,
    prefix: str | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    activity: ActivityOptions | None = None,
    keep_session: bool = True,
    idle_seconds: float = DEFAULT_IDLE_SECONDS,
) -> dict[str, Tool]:
    """:func:`mcp_tools` for async code: the same tools, listed without blocking the event loop."""
    where = McpServer.of(server)
    async with where.connect(timeout_seconds) as client:
        listed: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            try:
                page = await client.list_tools(cursor=cursor)
            except Exception as error:
                raise McpServerUnavailableError(f"MCP server {where.label} did not list its tools: {error}") from None
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        server_name = client.server_info.name if client.server_info is not None else ""
    name_prefix = prefix if prefix is not None else server_name
    if not name_prefix:
        raise ConfigurationError(f"MCP server {where.label} has no name: pass mcp_tools(..., prefix=...)")
    session = KeptSession(where, timeout_seconds=timeout_seconds, idle_seconds=idle_seconds) if keep_session else None
    caller = _Caller(where, timeout_seconds, session)
    tools = {
        f"{name_prefix}_{listed_tool.name}": _tool(caller, listed_tool, name_prefix, activity) for listed_tool in listed
    }
    return sanitize_tool_names(tools)


class _Caller:
    """How the tools of one :func:`mcp_tools` call reach their server: a kept session, or a connection per call."""

    def __init__(self, where: McpServer, timeout_seconds: float, session: KeptSession | None) -> None:
        self.where = where
        self.timeout_seconds = timeout_seconds
        self.session = session

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        try:
            if self.session is not None:
                result = await self.session.call_tool(name, arguments)
            else:
                async with self.where.connect(self.timeout_seconds) as client:
                    try:
                        result = await client.call_tool(name, arguments)
                    except Exception as error:
                        if not connection_lost(error):
                            raise
                        raise McpServerUnavailableError(
                            f"MCP server {self.where.label} failed during a call of {name}: {reason(error)}"
                        ) from None
        except MCPError as error:
            raise McpToolError(f"MCP tool {name} failed: {error}") from None
        if result.is_error:
            raise McpToolError(_text(result.content) or f"MCP tool {name} failed")
        if result.structured_content is not None:
            return result.structured_content
        return _output(result.content)


def _tool(caller: _Caller, listed: mcp_types.Tool, prefix: str, activity: ActivityOptions | None) -> Tool:
    remote_name = listed.name

    async def call(arguments: dict[str, Any], context: ToolContext) -> Any:
        return await caller.call(remote_name, dict(arguments))

    return create_tool(
        id=sanitize_tool_name(f"{prefix}_{remote_name}"),
        description=listed.description or listed.title or f"MCP tool {remote_name}",
        title=listed.title,
        input_schema=dict(listed.input_schema),
        execute=call,
        activity=activity,
    )


def _text(content: list[mcp_types.ContentBlock]) -> str:
    return "\n".join(block.text for block in content if isinstance(block, mcp_types.TextContent))


def _output(content: list[mcp_types.ContentBlock]) -> Any:
    """Text blocks as one string; anything else as the blocks themselves (camelCase JSON, like the wire)."""
    if all(isinstance(block, mcp_types.TextContent) for block in content):
        return _text(content)
    return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in content]
