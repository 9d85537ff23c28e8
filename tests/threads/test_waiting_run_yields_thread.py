"""A run that waits only for people yields its thread: the conversation goes on (every follow-up answered at once,
under every strategy), the waiting call stays answerable, and once answered the rest of the run is the thread's next
run, which reads what was said meanwhile. Every model call gets a transcript with one result per call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool
from tempo_agents.errors import ThreadBusyError
from tempo_agents.models.messages import Message
from tempo_agents.models.model import ModelRequest
from tempo_agents.tools import ask_user_tool
from tests.conftest import AppFactory, running_worker
from tests.support.transcripts import transcript_refusal
from tests.support.waiting_threads import RESOURCE, payments_agent, texts, until_idle, until_waiting


async def test_follow_ups_are_answered_at_once_and_the_approval_sees_them(make_app: AppFactory) -> None:
    seen: list[list[Message]] = []
    app = make_app([payments_agent(seen=seen)])
    memory = {"thread": "t-yield", "resource": RESOURCE}
    async with running_worker(app):
        first = await app.generate("payments", "Pay Bob", memory=memory)
        assert first.finish_reason == "suspended"
        replies = []
        for strategy, text in (("reject", "one"), ("interrupt", "two"), ("enqueue", "three")):
            reply = await app.generate("payments", text, memory=memory, thread_strategy=strategy)
            replies.append(reply.text)
            await until_idle(app, "t-yield")  # the reply's run has ended on the thread too
        assert replies == ["noted: one", "noted: two", "noted: three"]

        thread = await app.thread("t-yield", resource_id=RESOURCE)
        assert [r.run_id for r in thread.waiting] == [first.run_id] and thread.active == []
        suspended = await app.list_suspended_runs(thread_id="t-yield", resource_id=RESOURCE)
        assert [r.run_id for r in suspended.runs] == [first.run_id]
        # what the follow-ups read for the waiting call: a result that says it waits, for whom, since when
        marker = next(p.result for m in seen[1] for p in m.tool_results)
        assert marker["status"] == "waiting" and marker["awaitingApproval"] is True and "since" in marker

        answered = await app.approve_tool_call("payments", run_id=first.run_id)
        continued = await answered.text
        assert continued.startswith("paid; said meanwhile: Pay Bob | one | two | three | (Note: this run waited")

        await until_idle(app, "t-yield")
        thread = await app.thread("t-yield", resource_id=RESOURCE)
        assert thread.waiting == [] and thread.active == []
    said = [m for m in thread.messages]
    roles_texts = [(m["role"], Message.model_validate(m).text) for m in said if m["role"] in ("user", "assistant")]
    assert roles_texts[-2][0] == "user" and roles_texts[-2][1].startswith("(Note: this run waited")
    assert [t for _, t in roles_texts] == [
        "Pay Bob",
        "",
        "one",
        "noted: one",
        "two",
        "noted: two",
        "three",
        "noted: three",
        roles_texts[-2][1],
        continued,
    ]
    results = [p.result for m in said for p in Message.model_validate(m).tool_results]
    assert results == ["paid Bob"]  # the call's result took the marker's place, next to the call
    assert transcript_refusal([Message.model_validate(m) for m in said]) is None


async def test_a_continuation_queues_behind_the_active_run(make_app: AppFactory) -> None:
    release = asyncio.Event()
    started = asyncio.Event()

    async def slow(data: dict[str, Any]) -> str:
        started.set()
        await release.wait()
        return "looked"

    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text == "Pay Ann" and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"to": "Ann"})])
        if last.role == "user" and last.text == "Look" and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("look", {})])
        return ScriptedResponse(text="done: " + " | ".join(texts(request.messages, "user")))

    pay = create_tool(id="pay", description="Pays", execute=lambda data: "paid", require_approval=True)
    look = create_tool(id="look", description="Looks, slowly", execute=slow)
    app = make_app([Agent(id="queue", model=ScriptedModel(script), tools={"pay": pay, "look": look})])
    memory = {"thread": "t-behind", "resource": RESOURCE}
    async with running_worker(app):
        first = await app.generate("queue", "Pay Ann", memory=memory)
        assert first.finish_reason == "suspended"
        assert await until_waiting(app, "t-behind", 1) == [first.run_id]
        looking = await app.stream("queue", "Look", memory=memory)
        assert looking.thread_outcome is not None and looking.thread_outcome.outcome == "started"
        await started.wait()
        answered = await app.approve_tool_call("queue", run_id=first.run_id)
        thread = await app.thread("t-behind", resource_id=RESOURCE)
        while first.run_id not in [r.run_id for r in thread.queued]:
            thread = await app.thread("t-behind", resource_id=RESOURCE)
        assert [r.run_id for r in thread.active] == [looking.run_id]
        assert [r.run_id for r in thread.queued] == [first.run_id]
        release.set()
        assert await looking.text == "done: Pay Ann | Look"
        continued = await answered.text
        assert continued.startswith("done: Pay Ann | Look | (Note: this run waited")


async def test_two_waiting_runs_answered_at_once_go_on_one_after_the_other(make_app: AppFactory) -> None:
    app = make_app([payments_agent()])
    memory = {"thread": "t-two", "resource": RESOURCE}
    async with running_worker(app):
        first = await app.generate("payments", "Pay Bob", memory=memory)
        second = await app.generate("payments", "Pay Eve", memory=memory)
        assert (first.finish_reason, second.finish_reason) == ("suspended", "suspended")
        assert await until_waiting(app, "t-two", 2) == [first.run_id, second.run_id]

        ready = asyncio.Barrier(3)

        async def approve(run_id: str) -> str:
            await ready.wait()  # both answers are sent together
            answered = await app.approve_tool_call("payments", run_id=run_id)
            return await answered.text

        answers = asyncio.gather(approve(first.run_id), approve(second.run_id))
        await ready.wait()
        texts_ = await answers
        await until_idle(app, "t-two")
        thread = await app.thread("t-two", resource_id=RESOURCE)
    assert all(t.startswith("paid; said meanwhile:") for t in texts_)
    assert thread.waiting == [] and thread.active == [] and thread.queued == []
    messages = [Message.model_validate(m) for m in thread.messages]
    assert transcript_refusal(messages) is None
    finals = [m.text for m in messages if m.role == "assistant" and m.text.startswith("paid")]
    # the one that went on second saw the first one's ending, said before it went on
    assert len(finals) == 2 and finals[0] in finals[1]


async def test_waiting_holds_thread_keeps_todays_behaviour(make_app: AppFactory) -> None:
    app = make_app([payments_agent()], waiting_holds_thread=True)
    memory = {"thread": "t-hold", "resource": RESOURCE}
    async with running_worker(app):
        first = await app.generate("payments", "Pay Bob", memory=memory)
        assert first.finish_reason == "suspended"
        with pytest.raises(ThreadBusyError) as refused:
            await app.stream("payments", "one", memory=memory, thread_strategy="reject")
        assert refused.value.active_run_id == first.run_id
        # the run's option wins over the App's
        other = await app.generate("payments", "Pay Ann", memory={"thread": "t-run", "resource": RESOURCE})
        assert other.finish_reason == "suspended"
        thread = await app.thread("t-run", resource_id=RESOURCE)
        assert [r.run_id for r in thread.active] == [other.run_id]
        released = await app.generate(
            "payments",
            "Pay Joe",
            memory={"thread": "t-run2", "resource": RESOURCE},
            waiting_holds_thread=False,
        )
        follow = await app.generate(
            "payments", "one", memory={"thread": "t-run2", "resource": RESOURCE}, thread_strategy="reject"
        )
        assert follow.text == "noted: one"
        assert released.finish_reason == "suspended"


async def test_the_next_message_still_answers_a_waiting_ask_user_with_auto_resume(make_app: AppFactory) -> None:
    def script(request: ModelRequest) -> ScriptedResponse:
        refusal = transcript_refusal(request.messages)
        if refusal is not None:
            raise AssertionError(refusal)
        last = request.messages[-1]
        if last.role == "user" and last.text == "Book a table" and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("ask_user", {"question": "For how many?"})])
        if last.role == "user" and last.text == "Four of us" and request.step == 0:
            waiting = [p.result for m in request.messages for p in m.tool_results if isinstance(p.result, dict)]
            run_id = next(r["runId"] for r in waiting if r.get("suspended"))
            resume = {"question": "For how many?", "resumeData": "4", "suspendedToolRunId": run_id}
            return ScriptedResponse(tool_calls=[ScriptedToolCall("ask_user", resume)])
        return ScriptedResponse(text="booked: " + last.text if last.role == "user" else "booked")

    app = make_app([Agent(id="tables", model=ScriptedModel(script), tools={"ask_user": ask_user_tool})])
    options: dict[str, Any] = {"memory": {"thread": "t-ask", "resource": RESOURCE}, "auto_resume_suspended_tools": True}
    async with running_worker(app):
        first = await app.generate("tables", "Book a table", **options)
        assert first.finish_reason == "suspended"
        assert await until_waiting(app, "t-ask", 1) == [first.run_id]
        second = await app.stream("tables", "Four of us", **options)
        assert second.thread_outcome is not None and second.thread_outcome.outcome == "started"
        result = await second.result()
        assert [r.payload.result for r in result.tool_results] == [{"content": "User answered: 4", "isError": False}]
        handed = await app.client.get_workflow_handle(first.run_id).result()
        assert handed["finishReason"] == "handed-off"
        await until_idle(app, "t-ask")
        thread = await app.thread("t-ask", resource_id=RESOURCE)
        assert thread.waiting == [] and thread.queued == []
        assert transcript_refusal([Message.model_validate(m) for m in thread.messages]) is None


async def test_a_run_that_waits_for_its_budget_yields_its_thread_too(make_app: AppFactory) -> None:
    step = Usage(input_tokens=60, output_tokens=40, total_tokens=100)

    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text == "hello":
            return ScriptedResponse(text="hi", usage=step)
        if request.step < 4:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"n": request.step})], usage=step)
        return ScriptedResponse(text="found; said: " + " | ".join(texts(request.messages, "user")), usage=step)

    lookup = create_tool(id="lookup", description="Looks a thing up", execute=lambda data: f"found {data['n']}")
    agent = Agent(id="looper", model=ScriptedModel(script), tools={"lookup": lookup}, default_options={"max_steps": 9})
    app = make_app([agent])
    memory = {"thread": "t-budget", "resource": RESOURCE}
    budget = {"run": {"tokens": 250}, "on_exceeded": "wait"}
    async with running_worker(app):
        first = await app.generate("looper", "find them", memory=memory, budget=budget)
        assert first.finish_reason == "suspended"
        assert await until_waiting(app, "t-budget", 1) == [first.run_id]
        hello = await app.generate("looper", "hello", memory=memory, thread_strategy="reject")
        assert hello.text == "hi"
        await until_idle(app, "t-budget")
        resumed = await app.answer_budget(first.run_id, budget={"run": {"tokens": 1_000}}, answered_by="ops")
        done = await resumed.result()
    assert done.finish_reason == "stop"
    assert done.text.startswith("found; said: find them | hello | (Note: this run waited")


async def test_rollback_and_steer_messages_leave_a_waiting_run_alone(make_app: AppFactory) -> None:
    app = make_app([payments_agent()])
    memory = {"thread": "t-strategies", "resource": RESOURCE}
    async with running_worker(app):
        first = await app.generate("payments", "Pay Bob", memory=memory)
        assert first.finish_reason == "suspended"  # sent at once: the thread hears of the wait just after
        for strategy in ("rollback", "steer"):
            reply = await app.stream("payments", strategy, memory=memory, thread_strategy=strategy)
            assert reply.thread_outcome is not None and reply.thread_outcome.outcome == "started"
            assert await reply.text == f"noted: {strategy}"
            await until_idle(app, "t-strategies")
        assert await until_waiting(app, "t-strategies", 1) == [first.run_id]
        answered = await app.approve_tool_call("payments", run_id=first.run_id)
        assert (await answered.text).startswith("paid; said meanwhile: Pay Bob | rollback | steer | (Note:")
