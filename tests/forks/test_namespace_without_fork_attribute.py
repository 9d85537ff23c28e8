"""A namespace whose search attributes were registered before forks existed (no ``TempoAgentForkOf``): runs go on as
before, a run's detail lists no forks instead of failing, and starting a fork says which attributes to register."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedResponse
from tempo_agents.errors import ConfigurationError
from tempo_agents.workflows import search_attributes
from tests.conftest import running_worker, temporal_binary
from tests.support.fork_agents import by_turn, call, lookup_tool
from tests.support.http_api import served


async def test_a_namespace_without_the_fork_attribute(tmp_path: Path) -> None:
    earlier = [key for key in search_attributes.ALL if key is not search_attributes.FORK_OF]
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        data_converter=pydantic_data_converter,
        ui=False,
        dev_server_log_level="error",
        search_attributes=earlier,
    )
    try:
        executed: collections.Counter[str] = collections.Counter()
        responses = [ScriptedResponse(tool_calls=[call("Paris", "c1")]), ScriptedResponse(text="Clear.")]
        agent = Agent(id="travel", model=by_turn(responses), tools={"lookup": lookup_tool(executed)})
        app = App(agents=[agent], store=f"sqlite:///{tmp_path / 'store.db'}", client=env.client, task_queue="tq-old")
        async with served(app) as http, running_worker(app):
            original = await app.generate("travel", "Weather?")
            assert original.text == "Clear."
            detail = await http.get(f"/runs/{original.run_id}")
            assert detail.status_code == 200, detail.text
            assert detail.json()["forks"] == [] and detail.json()["forkOf"] is None
            with pytest.raises(ConfigurationError, match="TempoAgentForkOf"):
                await app.fork(original.run_id, at_step=1)
        await app.store.close()
    finally:
        await env.shutdown()
