"""What one click on an answer link costs the Temporal server, counted at the App's client: exactly one ``pending``
query and one ``resume`` update for an answer, and no update for a link whose principal may no longer answer (the
client checks who may answer before it sends). A user would notice more only as load, so the counts are asserted."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from temporalio.client import (
    Client,
    Interceptor,
    OutboundInterceptor,
    QueryWorkflowInput,
    StartWorkflowUpdateInput,
    WorkflowUpdateHandle,
)

from tempo_agents import App
from tempo_agents.approvals.answer_links import AnswerLinks, approval_choices
from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory, running_worker
from tests.support.approval_agents import TRANSFER_ARGS, payments_agent

SECRET = "link-secret-calls-5d1e"


class CountedCalls(Interceptor):
    """The queries and updates a client sends, by name, in the order sent."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.updates: list[str] = []

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        counted = self

        class _Outbound(OutboundInterceptor):
            async def query_workflow(self, input: QueryWorkflowInput) -> Any:
                counted.queries.append(input.query)
                return await super().query_workflow(input)

            async def start_workflow_update(self, input: StartWorkflowUpdateInput) -> WorkflowUpdateHandle[Any]:
                counted.updates.append(input.update)
                return await super().start_workflow_update(input)

        return _Outbound(next)

    def clear(self) -> None:
        self.queries.clear()
        self.updates.clear()


def counted_client(client: Client) -> tuple[Client, CountedCalls]:
    counted = CountedCalls()
    config = client.config()
    config["interceptors"] = [*config["interceptors"], counted]
    return Client(**config), counted


@asynccontextmanager
async def linked(app: App) -> AsyncIterator[tuple[AnswerLinks, httpx.AsyncClient]]:
    server = ApiServer(app, port=0, tokens={"tok-alice-c4": "alice"})
    await server.start()
    app.answer_links = AnswerLinks([SECRET], base_url=server.url)
    try:
        async with httpx.AsyncClient(timeout=60) as http:  # the link is the credential
            yield app.answer_links, http
    finally:
        await server.stop()


def approve_link(links: AnswerLinks, run_id: str, principal: str) -> str:
    made = links.links(
        run_id=run_id, tool_call_id="call-1", round=0, args=TRANSFER_ARGS, choices=approval_choices(),
        principal=principal,
    )  # fmt: skip
    url: str = made["answers"]["approve"]
    return url


async def test_one_click_makes_one_pending_query_and_one_update(make_app: AppFactory, client: Client) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, tool_approvers=["alice"])
    app = make_app([agent])
    counting, counted = counted_client(client)
    app.use_client(counting)
    async with running_worker(app), linked(app) as (links, http):
        first = await app.agent("payments").generate("pay")
        assert first.finish_reason == "suspended", first
        run_id = first.run_id
        assert [call.tool_call_id for call in await app.pending(run_id)] == ["call-1"]

        counted.clear()
        refused = await http.post(approve_link(links, run_id, "bob"))  # bob is not who the call waits for
        assert refused.status_code == 403, refused.text
        assert "This call now waits for alice; this link no longer answers it." in refused.text
        assert (counted.queries, counted.updates) == (["pending"], [])  # refused before anything was sent

        counted.clear()
        answered = await http.post(approve_link(links, run_id, "alice"))
        assert answered.status_code == 200, answered.text
        assert 'id="done">Approve: sent.' in answered.text
        assert (counted.queries, counted.updates) == (["pending"], ["resume"])

        await app.attach(run_id, follow="run").result()
    assert ran == [TRANSFER_ARGS]
