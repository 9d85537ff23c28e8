"""The setting of "One-click answer links": a payment's run whose call ``call-1`` waits for an approval (its
``run_id``, and the ``call`` as a notification channel reads it). The block's approve link, opened on a server
holding the same secrets, must approve that call as alice, once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from tempo_agents import App
from tempo_agents.server.serving import ApiServer
from tests.support.approval_agents import TRANSFER_ARGS, payments_agent
from tests.support.docs_scenes.scene import Names, served_app

__all__ = ["waiting_call"]

BASE_URL = "https://agents.example.com"
"""Where the page's links point: the server's public address."""


async def _opened(app: App, url: str) -> httpx.Response:
    """``url`` posted (its confirmation page's button) to ``app``'s HTTP API, serving at the link's address."""
    server = ApiServer(app, port=0)
    await server.start()
    try:
        async with httpx.AsyncClient(timeout=60) as http:  # no bearer token: the link is the credential
            return await http.post(url.replace(BASE_URL, server.url))
    finally:
        await server.stop()


@asynccontextmanager
async def waiting_call(names: Names, address: str) -> AsyncIterator[None]:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran)
    async with served_app(address, [agent]) as app:
        first = await app.agent("payments").generate("Pay acme")
        [call] = await app.pending(first.run_id)
        names.update(run_id=first.run_id, call=call)
        yield
        links = names["links"]
        assert links["dashboard"] == f"{BASE_URL}/#/runs/{first.run_id}"
        assert sorted(links["answers"]) == ["approve", "decline"]
        app.answer_links = names["app"].answer_links  # the block's secrets, on the server the link points to
        answered = await _opened(app, links["answers"]["approve"])
        assert answered.status_code == 200, answered.text
        await app.client.get_workflow_handle(first.run_id).result()
        answers = await app.queries(first.run_id).answers()
        assert [(answer.tool_call_id, answer.action, answer.answered_by) for answer in answers] == [
            ("call-1", "approve", "alice")
        ]
    assert ran == [TRANSFER_ARGS]
