"""Keeping one session to an MCP server open per worker (per event loop), shared by the calls that run there.

A task of its own owns the session (the SDK's connection lives in a task group that must be entered and left by
one task); calls send their requests through it concurrently. The session closes after ``idle_seconds`` without a
call, and when it breaks (the server restarted, its process died) the next call opens a new one. A call that
failed on a session that earlier calls had used is sent once more on a new session: a kept session can be stale
without anyone knowing until it is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

import mcp_types
from mcp import Client

from tempo_agents.mcp._server import McpServer, McpServerUnavailableError, connection_lost, reason

__all__ = ["KeptSession"]


@dataclass(eq=False)
class _Owner:
    """The task that holds one open session."""

    server: McpServer
    timeout_seconds: float
    idle_seconds: float
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    client: Client | None = None
    error: BaseException | None = None
    finished: bool = False
    calls: int = 0
    """Calls that used this session so far."""
    running: int = 0
    last_used: float = field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        try:
            async with self.server.connect(self.timeout_seconds) as client:
                self.client = client
                self.ready.set()
                while not self.stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.stop.wait(), self.idle_seconds)
                    if self.running == 0 and time.monotonic() - self.last_used >= self.idle_seconds:
                        break
        except Exception as error:
            self.error = error
        finally:
            self.finished = True
            self.client = None
            self.ready.set()


class KeptSession:
    """One session per event loop to ``server``, opened on first use."""

    def __init__(self, server: McpServer, *, timeout_seconds: float, idle_seconds: float) -> None:
        self._server = server
        self._timeout_seconds = timeout_seconds
        self._idle_seconds = idle_seconds
        self._owners: dict[asyncio.AbstractEventLoop, _Owner] = {}

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call a tool over the kept session; :class:`McpServerUnavailableError` when the server cannot be reached,
        ``MCPError`` when it refuses the request."""
        for _ in range(2):
            owner = await self._open()
            reused = owner.calls > 0
            owner.calls += 1
            owner.running += 1
            try:
                assert owner.client is not None
                return await owner.client.call_tool(name, arguments)
            except Exception as error:
                if not connection_lost(error):
                    raise
                owner.stop.set()
                if not reused:
                    raise McpServerUnavailableError(
                        f"MCP server {self._server.label} failed during a call of {name}: {reason(error)}"
                    ) from None
            finally:
                owner.running -= 1
                owner.last_used = time.monotonic()
        raise AssertionError("unreachable: the second attempt is on a new session")

    async def _open(self) -> _Owner:
        loop = asyncio.get_running_loop()
        owner = self._owners.get(loop)
        if owner is None or owner.finished or owner.stop.is_set():
            for other in [other for other in self._owners if other.is_closed()]:
                del self._owners[other]
            owner = _Owner(self._server, self._timeout_seconds, self._idle_seconds)
            owner.task = loop.create_task(owner.run(), name=f"mcp session {self._server.label}")
            self._owners[loop] = owner
        await owner.ready.wait()
        if owner.client is None:
            if isinstance(owner.error, McpServerUnavailableError):
                raise McpServerUnavailableError(owner.error.message) from None
            raise McpServerUnavailableError(
                f"MCP server {self._server.label} is unavailable: {reason(owner.error) if owner.error else 'closed'}"
            )
        return owner
