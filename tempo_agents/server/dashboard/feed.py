"""The dashboard's live feed: what every open dashboard hears, over one SSE route.

Two kinds of events: ``answered`` (a waiting call was answered through this server: sent at once, so the item
leaves every open inbox well within a second) and ``changed`` (the waiting runs changed in the store, or the
listed runs in visibility, which one poller per server reads while at least one dashboard listens: answers sent
by other processes, new suspensions, runs that start or end). A dashboard that connects is sent one ``changed``
once the poller has read after it connected: what changed between its first reads and the poller's first look (or
its look before the dashboard connected) would otherwise never be told.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from tempo_agents.client.app import App
from tempo_agents.client.waiting_runs import waiting_page
from tempo_agents.server.run_views import list_runs

__all__ = ["DashboardFeed"]

_log = logging.getLogger(__name__)
_QUEUE_LIMIT = 1000


class DashboardFeed:
    """Fans events out to subscribers; polls the waiting runs and visibility every ``interval`` seconds while any
    listen."""

    def __init__(self, app: App, *, interval: float = 0.5) -> None:
        self._app = app
        self._interval = interval
        self._subscribers: dict[asyncio.Queue[dict[str, Any]], Callable[[str | None], bool]] = {}
        self._poller: asyncio.Task[None] | None = None
        self._joined: list[asyncio.Queue[dict[str, Any]]] = []

    @property
    def listeners(self) -> int:
        """How many dashboards listen now."""
        return len(self._subscribers)

    def publish(self, event: dict[str, Any], *, tenant: str | None = None, everyone: bool = False) -> None:
        """Send ``event`` to every subscriber that sees ``tenant`` (``everyone``: to all; one too slow to keep up
        gets a single "refetch" instead)."""
        for queue, sees in list(self._subscribers.items()):
            if not everyone and not sees(tenant):
                continue
            if queue.qsize() < _QUEUE_LIMIT:
                queue.put_nowait(event)
                continue
            while not queue.empty():  # too far behind: everything it missed becomes one "refetch"
                queue.get_nowait()
            queue.put_nowait({"type": "changed", "inbox": True, "runs": True})

    @contextlib.asynccontextmanager
    async def subscribe(
        self, sees: Callable[[str | None], bool] = lambda tenant: True
    ) -> AsyncIterator[asyncio.Queue[dict[str, Any]]]:
        """A queue of the events of the tenants it ``sees`` (and those for everyone) for as long as the block
        runs."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._subscribers[queue] = sees
        self._joined.append(queue)
        if self._poller is None or self._poller.done():
            self._poller = asyncio.get_running_loop().create_task(self._poll())
        try:
            yield queue
        finally:
            self._subscribers.pop(queue, None)
            if not self._subscribers and self._poller is not None:
                self._poller.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._poller
                self._poller = None

    async def _fingerprints(self) -> tuple[Any, Any]:
        app = self._app
        waiting, listed = await asyncio.gather(
            waiting_page(app.store, app.client, app.task_queue, limit=100), list_runs(app, per_page=50)
        )
        inbox = (waiting.total, tuple((run.run_id, len(run.calls)) for run in waiting.runs))
        runs = (listed["total"], tuple((run["runId"], run["status"]) for run in listed["runs"]))
        return inbox, runs

    async def _poll(self) -> None:
        last: tuple[Any, Any] | None = None
        while True:
            joined, self._joined = self._joined, []
            try:
                current = await self._fingerprints()
            except Exception as error:  # visibility unreachable for a moment: try again at the next tick
                _log.debug("dashboard feed: visibility poll failed: %s", error)
                self._joined += joined
            else:
                if last is not None and current != last:
                    changed = {"type": "changed", "inbox": current[0] != last[0], "runs": current[1] != last[1]}
                    self.publish(changed, everyone=True)  # says only to read again: each reads its own
                for queue in joined:  # read after it connected: whatever it read first is at most this old
                    if queue in self._subscribers:
                        queue.put_nowait({"type": "changed", "inbox": True, "runs": True})
                last = current
            await asyncio.sleep(self._interval)
