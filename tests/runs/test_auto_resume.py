"""Auto-resume (reference §3.8): the next message on the thread resumes the suspended call through the model."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker
from tests.support.suspending_tools import age_tool


async def test_next_message_resumes_the_suspended_call(make_app: AppFactory) -> None:
    seen_run_ids: list[str] = []

    def script(request: ModelRequest) -> ScriptedResponse:
        last_user = [m for m in request.messages if m.role == "user"][-1].text
        if last_user == "Find Dero's age" and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("askAge", {"name": "Dero Israel"})])

        if last_user == "He is 25 years old" and request.step == 0:
            markers = [p.result for m in request.messages for p in m.tool_results if isinstance(p.result, dict)]
            run_id = next(m["runId"] for m in markers if m.get("suspended"))
            seen_run_ids.append(run_id)
            return ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall(
                        "askAge", {"name": "ignored", "resumeData": {"age": 25}, "suspendedToolRunId": run_id}
                    )
                ]
            )
        return ScriptedResponse(text="Dero is 25.")

    model = ScriptedModel(script)
    app = make_app([Agent(id="ages", model=model, tools={"askAge": age_tool()})])
    memory = {"thread": "t-auto", "resource": "u-auto"}
    async with running_worker(app):
        first = await app.agent("ages").generate("Find Dero's age", memory=memory, auto_resume_suspended_tools=True)
        second = await app.agent("ages").generate("He is 25 years old", memory=memory, auto_resume_suspended_tools=True)
        first_handle = app.client.get_workflow_handle(first.run_id)
        first_outcome = await first_handle.result()
        first_status = (await first_handle.describe()).status

    assert first.finish_reason == "suspended"
    assert seen_run_ids == [first.run_id]
    schema = model.requests[0].tools[0].input_schema
    assert schema["properties"]["suspendedToolRunId"]["description"] == "The runId of the suspended tool"
    assert schema["properties"]["resumeData"]["description"] == (
        "The resumeData object created from the resumeSchema of suspended tool"
    )
    assert schema["properties"]["resumeData"]["properties"]["age"]["type"] == "integer"
    assert second.finish_reason == "stop"
    assert second.suspend_payload is None
    assert [r.payload.result for r in second.tool_results] == [{"name": "Dero Israel", "age": 25}]
    assert first_outcome["finishReason"] == "handed-off"
    assert first_status == WorkflowExecutionStatus.COMPLETED


async def test_without_the_option_tools_have_no_resume_fields(make_app: AppFactory) -> None:
    model = ScriptedModel([ScriptedResponse(text="ok")])
    app = make_app([Agent(id="plain", model=model, tools={"askAge": age_tool()})])
    async with running_worker(app):
        await app.agent("plain").generate("hi", memory={"thread": "t", "resource": "u"})
    assert "resumeData" not in model.requests[0].tools[0].input_schema["properties"]
    with pytest.raises(ConfigurationError, match="auto_resume_suspended_tools needs memory"):
        await app.agent("plain").stream("hi", auto_resume_suspended_tools=True)


async def test_invalid_resume_data_from_the_model_does_not_consume_the_suspension(make_app: AppFactory) -> None:
    def script(request: ModelRequest) -> ScriptedResponse:
        last_user = [m for m in request.messages if m.role == "user"][-1].text
        if request.step == 0 and last_user == "start":
            return ScriptedResponse(tool_calls=[ScriptedToolCall("askAge", {"name": "A"})])
        if request.step == 0:
            return ScriptedResponse(
                tool_calls=[ScriptedToolCall("askAge", {"name": "A", "resumeData": {"age": "old"}})]
            )
        return ScriptedResponse(text="ok")

    app = make_app([Agent(id="bad-auto", model=ScriptedModel(script), tools={"askAge": age_tool()})])
    memory = {"thread": "t-bad", "resource": "u"}
    async with running_worker(app):
        first = await app.agent("bad-auto").generate("start", memory=memory, auto_resume_suspended_tools=True)
        second = await app.agent("bad-auto").generate("old", memory=memory, auto_resume_suspended_tools=True)
        still_waiting = await app.pending(first.run_id)
    result: dict[str, Any] = second.tool_results[0].payload.result
    assert result["error"] is True
    assert result["message"].startswith("Tool input validation failed for ask-age.")
    assert [p.tool_name for p in still_waiting] == ["askAge"]
