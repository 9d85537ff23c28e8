"""``tempo-agents api run steer | interrupt | rollback`` against a real server: what a person does from a terminal."""

from __future__ import annotations

import json

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, running_worker
from tests.support.cli_processes import api_data, cli
from tests.support.http_api import served

MEMORY = {"thread": "t-cli", "resource": "u-1"}


async def test_steer_interrupt_and_rollback_from_the_command_line(make_app: AppFactory) -> None:
    def script(request: ModelRequest) -> ScriptedResponse:
        users = [m.text for m in request.messages if m.role == "user"]
        if users[-1] == "Delete it":
            return ScriptedResponse(tool_calls=[ScriptedToolCall("delete", {})])
        return ScriptedResponse(text=f"Seen: {', '.join(users)}")

    delete = create_tool(id="delete", description="Deletes", execute=lambda d: "gone", require_approval=True)
    app = make_app([Agent(id="c", model=ScriptedModel(script), tools={"delete": delete})])
    async with served(app) as http, running_worker(app):
        url = str(http.base_url).removesuffix("/").removesuffix("/api")
        waiting = await app.generate("c", "Delete it", memory=MEMORY)
        code, out, err = await cli("api", "--url", url, "run", "steer", waiting.run_id, "Only the old files")
        assert code == 0, err
        steered = api_data(out)
        code, out, err = await cli("api", "--url", url, "run", "interrupt", waiting.run_id)
        assert code == 0, err
        interrupted = api_data(out)
        outcome = RunResult.model_validate(await app.client.get_workflow_handle(waiting.run_id).result())
        code, _, late = await cli("api", "--url", url, "run", "steer", waiting.run_id, "Too late")
        assert code == 1
        code, out, err = await cli("api", "--url", url, "run", "rollback", waiting.run_id)
        assert code == 0, err
        rolled_back = api_data(out)
        after = await app.generate("c", "Hello", memory=MEMORY)

    assert (steered["status"], steered["position"]) == ("kept", 1)
    assert interrupted == {"runId": waiting.run_id, "interruptRequested": True}
    assert outcome.finish_reason == "interrupted"
    assert [s.message.text for s in outcome.undelivered_steers] == ["Only the old files"]  # kept, then the run ended
    refused = json.loads(late)["error"]["details"]
    assert refused["status"] == 409 and refused["body"]["code"] == "RUN_FINISHED"
    assert rolled_back["removedMessages"] == 3 and rolled_back["threadId"] == "t-cli"
    assert after.text == "Seen: Hello"
