"""A fork starts from a copy of its origin's conversation, under an id of its own and, unless it is given a memory
thread, with no resource: erasing the origin's resource (or the origin run) erases its forks too, forks of forks
included, found by the origin they name."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker
from tests.support.store_contents import store_contents
from tests.support.temporal_cli import show_history

pytestmark = pytest.mark.timeout(600)  # an erasure may wait a minute for Temporal to delete a closed execution

SECRET = "UMBRELLA-DIAGNOSIS-3318"


def _echo() -> Agent:
    def script(request: ModelRequest) -> ScriptedResponse:
        said = [message.text for message in request.messages if message.role == "user"]
        return ScriptedResponse(text=f"noted: {' / '.join(said)}")

    return Agent(id="clerk", model=ScriptedModel(script))


@pytest.mark.parametrize("scope", ["resource", "run"])
async def test_erasing_a_run_erases_its_forks(
    make_app: AppFactory, temporal_env: WorkflowEnvironment, scope: str
) -> None:
    app = make_app([_echo()])
    resource = f"umbrella-{scope}"
    async with running_worker(app):
        origin = await app.generate("clerk", SECRET, memory={"thread": "t1", "resource": resource})
        fork = await app.fork(origin.run_id, messages="and then?")
        assert SECRET in await fork.text
        again = await app.fork(fork.run_id, messages="and after that?")
        assert SECRET in await again.text
        kept = await app.generate("clerk", "unrelated", memory={"thread": "t1", "resource": "other"})

        report = await (app.erase(resource=resource) if scope == "resource" else app.erase(run=origin.run_id))

        assert {origin.run_id, fork.run_id, again.run_id} <= set(report.deleted_runs)
        assert kept.run_id not in report.deleted_runs
        assert SECRET not in store_contents(app.store)
        for run_id in (fork.run_id, again.run_id):
            code, _ = await show_history(temporal_env.client, run_id)
            assert code != 0
        assert await app.attach(kept.run_id).text == "noted: unrelated"
