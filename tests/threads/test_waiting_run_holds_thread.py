"""With ``waiting_holds_thread=True``, a run that waits for a person still holds its thread: a new message waits its
turn behind it (or is refused), unless it may resume the waiting call (``auto_resume_suspended_tools``), in which
case it starts at once beside it and takes the call over."""

from __future__ import annotations

from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.errors import ThreadBusyError
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker

MEMORY = {"thread": "t-wait", "resource": "u1"}
HOLDS: dict[str, Any] = {"waiting_holds_thread": True}
"""Today's behaviour, kept by this option (the default yields the thread: test_waiting_run_yields_thread.py)."""


async def ask_age(data: dict[str, Any], ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"message": "How old is the user?"})
    return {"age": ctx.resume_data["age"]}


def ages_agent() -> Agent:
    def script(request: ModelRequest) -> ScriptedResponse:
        last_user = [m for m in request.messages if m.role == "user"][-1].text
        if last_user == "Find the age" and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("askAge", {"name": "Dero"})])
        if last_user == "He is 25" and request.step == 0:
            markers = [p.result for m in request.messages for p in m.tool_results if isinstance(p.result, dict)]
            run_id = next(m["runId"] for m in markers if m.get("suspended"))
            resume = {"name": "Dero", "resumeData": {"age": 25}, "suspendedToolRunId": run_id}
            return ScriptedResponse(tool_calls=[ScriptedToolCall("askAge", resume)])
        users = [m for m in request.messages if m.role == "user"]
        return ScriptedResponse(text=f"{last_user}: answered after {len(users)}")

    tool = create_tool(
        id="ask-age",
        description="Asks for a user's age",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}},
        resume_schema={"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]},
        execute=ask_age,
    )
    return Agent(id="ages", model=ScriptedModel(script), tools={"askAge": tool})


async def test_a_waiting_run_holds_its_thread_until_answered(make_app: AppFactory) -> None:
    app = make_app([ages_agent()])
    async with running_worker(app):
        first = await app.generate("ages", "Find the age", memory=MEMORY, **HOLDS)
        assert first.finish_reason == "suspended"
        try:
            await app.stream("ages", "Anything else?", memory=MEMORY, thread_strategy="reject", **HOLDS)
        except ThreadBusyError as error:
            assert error.active_run_id == first.run_id
        else:
            raise AssertionError("a waiting run's thread took a second run")
        later = await app.stream("ages", "Anything else?", memory=MEMORY, **HOLDS)
        assert later.thread_outcome is not None and later.thread_outcome.outcome == "queued"
        await app.resume_stream("ages", {"age": 31}, run_id=first.run_id)
        assert await later.text == "Anything else?: answered after 2"  # after the first run, having seen it


async def test_a_message_that_may_resume_the_waiting_call_starts_at_once(make_app: AppFactory) -> None:
    app = make_app([ages_agent()])
    options: dict[str, Any] = {"memory": MEMORY, "auto_resume_suspended_tools": True, **HOLDS}
    async with running_worker(app):
        first = await app.generate("ages", "Find the age", **options)
        assert first.finish_reason == "suspended"
        second = await app.stream("ages", "He is 25", **options)
        assert second.thread_outcome is not None
        assert second.thread_outcome.outcome == "started"
        assert second.thread_outcome.active_run_id == first.run_id
        result = await second.result()
        assert [r.payload.result for r in result.tool_results] == [{"age": 25}]
        handed = await app.client.get_workflow_handle(first.run_id).result()
        assert handed["finishReason"] == "handed-off"
