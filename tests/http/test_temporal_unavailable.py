"""While Temporal does not answer, a route that needs it answers 503 with Retry-After (a retry may cure it), as for
an unreachable store, never a 500 that clients and senders take for a bug."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.server.serving import ApiServer
from tempo_agents.workflows import search_attributes
from tests.conftest import temporal_binary

pytestmark = pytest.mark.timeout(180)


async def test_a_route_that_asks_temporal_answers_503_while_temporal_is_down(tmp_path: Path) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        data_converter=pydantic_data_converter,
        ui=False,
        dev_server_log_level="error",
        search_attributes=search_attributes.ALL,
    )
    agent = Agent(id="clerk", instructions="Answer.", model=ScriptedModel([ScriptedResponse(text="ok")]))
    app = App(agents=[agent], store=f"sqlite:///{tmp_path / 'store.db'}", client=env.client)
    server = ApiServer(app, port=0)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
            assert (await http.get("/api/runs/no-such-run/steps")).status_code == 404  # Temporal up: it answers
            await env.shutdown()
            answer = await http.get("/api/runs/no-such-run/steps")
    finally:
        await server.stop()
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "5"
    body = answer.json()
    assert body["code"] == "TEMPORAL_UNAVAILABLE"
    assert body["error"].startswith("Temporal did not answer (UNAVAILABLE")
