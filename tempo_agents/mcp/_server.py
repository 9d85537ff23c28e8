"""Where an MCP server is (a command over stdio or a streamable HTTP URL) and one connection to it."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from mcp import Client, MCPError, StdioServerParameters
from mcp_types import CONNECTION_CLOSED

from tempo_agents.errors import TempoAgentsError

__all__ = ["McpServer", "McpServerSource", "McpServerUnavailableError", "McpToolError", "connection_lost", "reason"]

McpServerSource = str | Sequence[str] | StdioServerParameters
"""A streamable HTTP URL (``http://…``/``https://…``), a command (a list of words, or a string split like a shell
would) started over stdio, or the SDK's ``StdioServerParameters`` (environment, working directory)."""


class McpServerUnavailableError(TempoAgentsError):
    """The MCP server could not be reached (not started, refused, crashed, or did not answer in time)."""

    code = "MCP_SERVER_UNAVAILABLE"


class McpToolError(TempoAgentsError):
    """The MCP server answered a tool call with an error; the model sees its text as the tool's error."""

    code = "MCP_TOOL_ERROR"


@dataclass(frozen=True)
class McpServer:
    """An MCP server as :func:`~tempo_agents.mcp.mcp_tools` reaches it: the transport's target and how to name it."""

    target: str | StdioServerParameters
    label: str
    """How error messages name the server: its URL or its command line."""

    @classmethod
    def of(cls, source: McpServerSource) -> McpServer:
        if isinstance(source, StdioServerParameters):
            return cls(source, shlex.join([source.command, *source.args]))
        if isinstance(source, str) and source.startswith(("http://", "https://")):
            return cls(source, source)
        words = shlex.split(source) if isinstance(source, str) else list(source)
        if not words or not all(isinstance(word, str) for word in words):
            raise ValueError(f"an MCP server is a URL or a command, got {source!r}")
        return cls(StdioServerParameters(command=words[0], args=words[1:]), shlex.join(words))

    @contextlib.asynccontextmanager
    async def connect(self, timeout_seconds: float) -> AsyncIterator[Client]:
        """A connection of its own (a subprocess for stdio, a session for HTTP), closed when the block ends.

        A server that cannot be reached raises :class:`McpServerUnavailableError` naming it.
        """
        client = Client(self.target, read_timeout_seconds=timeout_seconds, cache=None)
        try:
            entered = await client.__aenter__()
        except Exception as error:
            raise McpServerUnavailableError(f"MCP server {self.label} is unavailable: {reason(error)}") from None
        try:
            yield entered
        finally:
            with contextlib.suppress(Exception):
                await client.__aexit__(None, None, None)


def reason(error: BaseException) -> str:
    """The innermost readable reason of a connection failure (anyio wraps them in exception groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def connection_lost(error: BaseException) -> bool:
    """Whether a failed request failed for want of a connection (anything but an error the server sent)."""
    return not isinstance(error, MCPError) or error.code == CONNECTION_CLOSED
