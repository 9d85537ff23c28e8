"""The dashboard's live feed as a dashboard meets it: over HTTP, against a real API server, worker and Temporal."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from tests.conftest import AppFactory, running_worker
from tests.support.browser import dashboard_server, desk_agent
from tests.support.polling import until


async def test_a_dashboard_that_connects_after_an_item_appeared_is_told_to_read_again(make_app: AppFactory) -> None:
    """A dashboard reads its inbox (empty), a question appears, then the dashboard connects to the feed: the server's
    poller starts with it, and its first look already holds the question, so no change is ever seen. The server says
    to read again once it has looked after the connection, and the question is not left unshown until something else
    changes."""
    app = make_app([desk_agent()])
    async with (
        running_worker(app),
        dashboard_server(app) as server,
        httpx.AsyncClient(base_url=server.url, timeout=30) as http,
    ):
        assert (await http.get("/api/inbox")).json()["items"] == []  # the dashboard's first read
        run_id = (await app.agent("desk").stream("question")).run_id

        async def waiting() -> list[dict[str, Any]]:
            items: list[dict[str, Any]] = (await http.get("/api/inbox")).json()["items"]
            return items

        [item] = await until(waiting)
        assert item["runId"] == run_id
        heard: list[dict[str, Any]] = []

        async def listen() -> None:
            async with http.stream("GET", "/api/dashboard/events") as events:
                async for line in events.aiter_lines():
                    if line.startswith("data: "):
                        heard.append(json.loads(line[6:]))
                        if heard[-1]["type"] == "changed" and heard[-1]["inbox"]:
                            return

        await asyncio.wait_for(listen(), 15)
    assert heard[0] == {"type": "hello"} and heard[-1]["type"] == "changed"
