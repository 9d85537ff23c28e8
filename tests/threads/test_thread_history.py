"""A thread's workflow keeps a short history: idle, it continues as new (carrying its done runs), so a thread used
for a long time is many short histories; what it lists survives."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.threads.operations import thread_workflow_id
from tempo_agents.workflows.thread_payloads import ThreadState
from tests.conftest import continue_as_new_server, running_worker
from tests.support.thread_agents import Gate, gated_agent

MEMORY = {"thread": "long", "resource": "u1"}


async def test_an_idle_thread_continues_as_new_and_keeps_its_runs(tmp_path: Path) -> None:
    async with continue_as_new_server(20) as env:
        app = App(
            agents=[gated_agent(Gate(opened=True))],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with running_worker(app):
            texts = [await (await app.stream("chat", f"m{n}", memory=MEMORY)).text for n in range(6)]
            assert texts == [f"m{n} after {n + 1}" for n in range(6)]
            handle = env.client.get_workflow_handle(thread_workflow_id(app.task_queue, "u1", "long"))
            for _ in range(500):  # a run's finish chunk comes just before its workflow ends
                view = await app.thread("long", resource_id="u1")
                if len(view.done) == 6:
                    break
                await asyncio.sleep(0.02)
            run_id: str | None = (await handle.describe()).run_id
            lengths = []
            while run_id:  # back along the chain of continue-as-new
                history = await env.client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()
                lengths.append(len(history.events))
                if lengths[1:]:
                    assert history.events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
                run_id = history.events[0].workflow_execution_started_event_attributes.continued_execution_run_id
            assert len(lengths) >= 2 and max(lengths) < 60, lengths
            view = await app.thread("long", resource_id="u1")
            assert len(view.done) == 6
            assert len(view.messages) == 12
        await app.store.close()


async def test_a_run_waiting_with_the_thread_yielded_is_carried_across_continue_as_new(tmp_path: Path) -> None:
    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text == "Pay Bob" and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"to": "Bob"})])
        return ScriptedResponse(text="paid" if request.step else f"noted {last.text}")

    pay = create_tool(id="pay", description="Pays", execute=lambda data: "paid Bob", require_approval=True)
    async with continue_as_new_server(20) as env:
        app = App(
            agents=[Agent(id="payments", model=ScriptedModel(script), tools={"pay": pay})],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with running_worker(app):
            first = await app.generate("payments", "Pay Bob", memory=MEMORY)
            assert first.finish_reason == "suspended"
            handle = env.client.get_workflow_handle(thread_workflow_id(app.task_queue, "u1", "long"))
            began = (await handle.describe()).run_id
            for n in range(4):  # enough events for the thread to continue as new while the first run waits
                assert (await app.generate("payments", f"m{n}", memory=MEMORY)).text == f"noted m{n}"
            view = await app.thread("long", resource_id="u1")
            while view.active or (await handle.describe()).run_id == began:
                await asyncio.sleep(0.05)
                view = await app.thread("long", resource_id="u1")
            assert [entry.run_id for entry in view.waiting] == [first.run_id]
            answered = await app.approve_tool_call("payments", run_id=first.run_id)
            assert await answered.text == "paid"
            while [e.run_id for e in view.done if e.run_id == first.run_id] == []:
                await asyncio.sleep(0.05)
                view = await app.thread("long", resource_id="u1")
            assert view.waiting == [] and view.active == []
            assert [e.status for e in view.done if e.run_id == first.run_id] == ["COMPLETED"]
        await app.store.close()


async def test_runs_waiting_with_large_messages_do_not_stop_the_thread_continuing_as_new(tmp_path: Path) -> None:
    """Three runs whose messages are some 900 KB each wait for approvals, having yielded the thread: the thread still
    continues as new (what it carries of a waiting run is what it uses, not its messages), answers the next messages
    and lets each waiting run go on once approved."""

    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text.startswith("Pay ") and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"to": last.text[4:6]})])
        return ScriptedResponse(text="paid" if request.step else f"noted {last.text}")

    pay = create_tool(id="pay", description="Pays", execute=lambda data: "paid", require_approval=True)
    async with continue_as_new_server(20) as env:
        app = App(
            agents=[Agent(id="payments", model=ScriptedModel(script), tools={"pay": pay})],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with running_worker(app):
            waiting = []
            for n in range(3):
                suspended = await app.generate("payments", f"Pay {n}{n} " + "x" * 900_000, memory=MEMORY)
                assert suspended.finish_reason == "suspended"
                waiting.append(suspended.run_id)
                while len((await app.thread("long", resource_id="u1")).waiting) <= n:
                    await asyncio.sleep(0.05)
            handle = env.client.get_workflow_handle(thread_workflow_id(app.task_queue, "u1", "long"))
            carried: ThreadState | None = None
            for n in range(20):  # until the thread has continued as new carrying all three waiting runs
                reply = await asyncio.wait_for(app.generate("payments", f"m{n}", memory=MEMORY), 60)
                assert reply.text == f"noted m{n}"
                started = (await handle.fetch_history()).events[0].workflow_execution_started_event_attributes
                [carried] = await env.client.data_converter.decode(started.input.payloads, [ThreadState])
                if [run.run_id for run in carried.waiting] == waiting:
                    break
            assert carried is not None and [run.run_id for run in carried.waiting] == waiting
            still = await asyncio.wait_for(app.generate("payments", "still there?", memory=MEMORY), 60)
            assert still.text == "noted still there?"
            for run_id in waiting:
                answered = await app.approve_tool_call("payments", run_id=run_id)
                assert await asyncio.wait_for(answered.text, 120) == "paid"
            history = await handle.fetch_history()
        await app.store.close()
    assert not [e for e in history.events if e.HasField("workflow_task_failed_event_attributes")]
