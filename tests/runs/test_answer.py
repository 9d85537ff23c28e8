"""One way to answer a call and one way to ask a run: ``App.answer`` takes the request every convenience
builds, and ``app.queries(run_id)`` asks the run's typed queries."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.worker import Worker

from tempo_agents import (
    Agent,
    ResumeError,
    ResumeRequest,
    ScriptedModel,
    ScriptedResponse,
    ScriptedToolCall,
    TempoAgentsPlugin,
    ToolContext,
    create_tool,
)
from tests.conftest import AppFactory


def confirm_agent(agent_id: str) -> Agent:
    async def execute(data: Any, ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            return await ctx.suspend({"question": "charge?"})
        return {"charged": data["amount"], "confirmed": ctx.resume_data["confirmed"]}

    charge = create_tool(
        id="charge",
        description="Charges a card",
        input_schema={"type": "object", "properties": {"amount": {"type": "integer"}}},
        resume_schema={"type": "object", "properties": {"confirmed": {"type": "boolean"}}, "required": ["confirmed"]},
        execute=execute,
    )
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("charge", {"amount": 990}, id="call-1")]),
            ScriptedResponse(text="Charged."),
        ]
    )
    return Agent(id=agent_id, model=model, tools={"charge": charge})


async def test_app_answer_resumes_and_the_queries_tell_what_happened(make_app: AppFactory) -> None:
    app = make_app([confirm_agent("pay")])
    # The worker is built from the App by the plugin, as app.worker() does.
    async with Worker(app.client, task_queue=app.task_queue, plugins=[TempoAgentsPlugin.for_app(app)]):
        first = await app.agent("pay").generate("charge 990")
        assert first.finish_reason == "suspended"
        queries = app.queries(first.run_id)
        pending = await app.pending(first.run_id)
        assert [(call.tool_call_id, call.tool_name) for call in pending] == [("call-1", "charge")]
        assert await queries.status() == "suspended"
        assert await queries.answers() == []

        request = ResumeRequest(action="resume", data={"confirmed": True}, answered_by="alice")
        stream = await app.answer(first.run_id, request, agent_id="pay", idempotency_key="answer-once")
        done = await stream.result()
        assert done.finish_reason == "stop"
        assert done.text == "Charged."
        again = await app.answer(first.run_id, request, agent_id="pay", idempotency_key="answer-once")
        assert (await again.result()).text == "Charged."  # the same key: the first outcome, not a second resume

        assert await queries.pending() == []
        answers = await queries.answers()
        assert [(a.tool_call_id, a.tool_name, a.action, a.answered_by) for a in answers] == [
            ("call-1", "charge", "resume", "alice")
        ]
        assert await queries.steps() == 2
        assert (await queries.snapshot()).answers == answers


async def test_a_refused_answer_names_the_caller_and_the_agent(make_app: AppFactory) -> None:
    app = make_app([confirm_agent("pay"), confirm_agent("other")])
    async with app.worker():
        first = await app.agent("pay").generate("charge 990")
        request = ResumeRequest(action="resume", data={"confirmed": True})
        with pytest.raises(ResumeError) as refused:
            await app.answer(first.run_id, request, agent_id="other")
        assert refused.value.code == "AGENT_RESUME_AGENT_MISMATCH"
        assert str(refused.value) == (
            f'Agent "other" resume_stream() cannot resume runId "{first.run_id}": the run belongs to another agent.'
        )
        resumed = await app.agent("pay").answer(first.run_id, request, method="resume_generate")
        assert (await resumed.result()).text == "Charged."
        with pytest.raises(ResumeError) as late:
            await app.answer(first.run_id, ResumeRequest(action="approve"), agent_id="pay")
        assert late.value.code == "AGENT_RESUME_NOT_SUSPENDED"
        assert str(late.value) == (
            f'Agent "pay" approve_tool_call() cannot resume runId "{first.run_id}" because it is not suspended.'
        )
