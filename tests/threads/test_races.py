"""Races forced from outside: clients in two processes, every one ready before any sends, send to one thread at
once under each strategy. Per strategy the outcome is exact, the thread's messages are in the order its runs ran (or,
steered, in the order the active run received them), and no message is lost or doubled."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.threads.operations import ThreadSnapshot
from tempo_agents.workflows.payloads import RunResult
from tempo_agents.workflows.steering import STEER
from tests.conftest import AppFactory, closed_history, running_worker
from tests.support.thread_agents import Gate, answer_of, gated_agent
from tests.support.thread_clients import Race, race_from_processes

pytestmark = pytest.mark.timeout(240)

PER_PROCESS = 4
MESSAGES = [[f"p{p}-m{m}" for m in range(PER_PROCESS)] for p in range(2)]
SENT = [message for messages in MESSAGES for message in messages]


def _race(app: App, temporal_env: WorkflowEnvironment, strategy: str) -> Race:
    return Race(
        address=temporal_env.client.service_client.config.target_host,
        store=app.store.url,
        task_queue=app.task_queue,
        thread="busy",
        resource="everyone",
        strategy=strategy,
    )


async def _finished(app: App, count: int) -> ThreadSnapshot:
    """The thread once ``count`` runs are done and none is active or queued."""
    for _ in range(1500):
        view = await app.thread("busy", resource_id="everyone")
        if not view.active and not view.queued and len(view.done) == count:
            return view
        await asyncio.sleep(0.05)
    raise AssertionError(f"the thread did not finish: {view}")


async def _texts(app: App) -> list[tuple[str, str]]:
    messages = await app.store.get_thread_messages("busy", "everyone")
    return [(m["role"], "".join(p.get("text", "") for p in m["content"])) for m in messages]


async def test_enqueue_race_runs_every_message_once_in_queue_order(
    make_app: AppFactory, temporal_env: WorkflowEnvironment
) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        results = await asyncio.to_thread(race_from_processes, _race(app, temporal_env, "enqueue"), MESSAGES)
        outcomes = collections.Counter(r["outcome"] for r in results)
        assert outcomes == {"started": 1, "queued": len(SENT) - 1}
        (first,) = [r for r in results if r["outcome"] == "started"]
        queued = sorted((r for r in results if r["outcome"] == "queued"), key=lambda r: r["position"])
        assert [r["position"] for r in queued] == list(range(1, len(SENT)))
        assert {r["activeRunId"] for r in queued} == {first["runId"]}
        assert len({r["runId"] for r in results}) == len(SENT)
        gate.open()
        view = await _finished(app, len(SENT))
    ran = [first, *queued]
    assert [(d.run_id, d.status) for d in view.done] == [(r["runId"], "COMPLETED") for r in ran]
    expected: list[tuple[str, str]] = []
    for n, result in enumerate(ran, start=1):
        expected += [("user", result["message"]), ("assistant", answer_of(result["message"], n))]
    assert await _texts(app) == expected  # every message once, in the order the runs ran, each seeing all before it
    assert sorted(text for role, text in expected if role == "user") == sorted(SENT)


async def test_reject_race_starts_exactly_one_run(make_app: AppFactory, temporal_env: WorkflowEnvironment) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        results = await asyncio.to_thread(race_from_processes, _race(app, temporal_env, "reject"), MESSAGES)
        outcomes = collections.Counter(r["outcome"] for r in results)
        assert outcomes == {"started": 1, "rejected": len(SENT) - 1}
        (winner,) = [r for r in results if r["outcome"] == "started"]
        assert {r["activeRunId"] for r in results if r["outcome"] == "rejected"} == {winner["runId"]}
        gate.open()
        view = await _finished(app, 1)
    assert [d.run_id for d in view.done] == [winner["runId"]]
    assert await _texts(app) == [("user", winner["message"]), ("assistant", answer_of(winner["message"], 1))]


@pytest.mark.parametrize("strategy", ["interrupt", "rollback"])
async def test_jumping_race_runs_every_message_once_each_seeing_all_before(
    make_app: AppFactory, temporal_env: WorkflowEnvironment, strategy: str
) -> None:
    """Messages that all arrive at once while a run is busy jump the queue behind those that jumped before them: each
    is told its true position, and they run in the order they arrived (the first interrupter first); under
    ``rollback`` the busy run is cancelled and leaves nothing in the thread.

    The busy run is in its model step before the racers send, and its cancellation completes only once every sender
    has its answer: cancelled sooner (before its model step, a cancellation nothing holds back), it would let the
    first jumper's run start while others still arrive, and each later one would (rightly) be told a position one
    lower."""
    gate, cancellation_gate, waiting = Gate(), Gate(), asyncio.Event()
    app = make_app([gated_agent(gate, cancellation_gate=cancellation_gate, waiting=waiting)])
    async with running_worker(app):
        busy = await app.stream("chat", "busy-run", memory={"thread": "busy", "resource": "everyone"})
        assert busy.thread_outcome is not None and busy.thread_outcome.outcome == "started"
        await asyncio.wait_for(waiting.wait(), 60)
        results = await asyncio.to_thread(race_from_processes, _race(app, temporal_env, strategy), MESSAGES)
        cancellation_gate.open()
        assert collections.Counter(r["outcome"] for r in results) == {"queued": len(SENT)}
        assert {r["activeRunId"] for r in results} == {busy.run_id}
        queued = sorted(results, key=lambda r: r["position"])
        assert [r["position"] for r in queued] == list(range(1, len(SENT) + 1))  # each its own, true position
        if strategy == "rollback":  # the busy run ends cancelled while its model step waits
            for _ in range(600):
                if (await app.thread("busy", resource_id="everyone")).done:
                    break
                await asyncio.sleep(0.05)
        gate.open()
        view = await _finished(app, len(SENT) + 1)
    statuses = collections.Counter(d.status for d in view.done)
    busy_status = "CANCELED" if strategy == "rollback" else "COMPLETED"
    assert view.done[0].run_id == busy.run_id and view.done[0].status == busy_status
    assert [d.run_id for d in view.done] == [busy.run_id, *(r["runId"] for r in queued)]  # in arrival order
    assert statuses == {
        "COMPLETED": len(SENT) + (strategy == "interrupt"),
        **({"CANCELED": 1} if strategy == "rollback" else {}),
    }
    texts = await _texts(app)
    users = [text for role, text in texts if role == "user"]
    ran = [r["message"] for r in queued]
    assert users == (ran if strategy == "rollback" else ["busy-run", *ran])  # every message once, in turn
    assert [text for role, text in texts if role == "assistant"] == [
        answer_of(user, n) for n, user in enumerate(users, start=1)
    ]  # each run saw every message before it


class WorkingRun:
    """An agent whose first model step calls ``work``, a tool that holds the run until ``gate`` is set (``working``
    says it has begun), and whose second answers with every user message it was shown, joined by ``" | "``. A steer
    that arrives while ``work`` runs therefore always meets another model step: none can come as the run takes its
    last one (``run-finished``, ``undelivered_steers``). ``seen`` holds, per model step, the roles of the messages
    the model was shown and the user messages' texts."""

    def __init__(self) -> None:
        self.working = asyncio.Event()
        self.gate = asyncio.Event()
        self.seen: dict[int, tuple[list[str], list[str]]] = {}

    def agent(self) -> Agent:
        async def work(data: dict[str, Any], ctx: ToolContext) -> str:
            self.working.set()
            await self.gate.wait()
            return "worked"

        def script(request: ModelRequest) -> ScriptedResponse:
            users = [m.text for m in request.messages if m.role == "user"]
            self.seen[request.step] = ([m.role for m in request.messages], users)  # a retried step sees the same
            if request.step == 0:
                return ScriptedResponse(tool_calls=[ScriptedToolCall("work", {}, id="w")])
            return ScriptedResponse(text=" | ".join(users))

        tool = create_tool(id="work", description="Works until released", execute=work)
        return Agent(id="chat", model=ScriptedModel(script), tools={"work": tool})


async def test_steer_race_delivers_every_message_once_into_the_active_run(
    make_app: AppFactory, temporal_env: WorkflowEnvironment
) -> None:
    """While the active run's tool works, every client steers at once: each message goes into that run (no run of
    its own), its model sees all of them once at its next step, in the order the run received them, and the thread
    keeps them in that order."""
    working = WorkingRun()
    app = make_app([working.agent()])
    async with running_worker(app):
        active = await app.stream("chat", "start", memory={"thread": "busy", "resource": "everyone"})
        await asyncio.wait_for(working.working.wait(), 120)  # the run is in its tool: past its first model step
        results = await asyncio.to_thread(race_from_processes, _race(app, temporal_env, "steer"), MESSAGES)
        assert collections.Counter(r["outcome"] for r in results) == {"steered": len(SENT)}
        assert {r["runId"] for r in results} == {r["activeRunId"] for r in results} == {active.run_id}
        assert sorted(r["message"] for r in results) == sorted(SENT)
        # Each "steered" answer came after the signal was in the run's history: all of them wait for its next step.
        working.gate.set()
        result = await active.result()
        run = await temporal_env.client.get_workflow_handle(active.run_id, result_type=RunResult).result()
        view = await _finished(app, 1)
        history = await closed_history(temporal_env.client, active.run_id)
    converter = temporal_env.client.data_converter.payload_converter
    signaled = [
        e.workflow_execution_signaled_event_attributes
        for e in history.events
        if e.HasField("workflow_execution_signaled_event_attributes")
    ]
    arrived = [
        converter.from_payloads(s.input.payloads, [dict])[0]["message"]["content"][0]["text"]
        for s in signaled
        if s.signal_name == STEER
    ]  # the order the run received the steers, from its history
    assert run.finish_reason == "stop" and run.steps == 2 and run.undelivered_steers == []
    steers = [c.model_dump(by_alias=True)["data"] for c in result.chunks if c.type == "data-user-message"]
    assert [s["position"] for s in steers] == list(range(1, len(SENT) + 1))  # journaled in the order received
    assert {s["step"] for s in steers} == {1}  # all at the step after the one they arrived during
    received = [s["text"] for s in steers]
    assert received == arrived  # in the order the run received them
    assert sorted(received) == sorted(SENT)  # every message once
    assert working.seen[0] == (["user"], ["start"])
    assert working.seen[1] == (["user", "assistant", "tool", *["user"] * len(SENT)], ["start", *received])
    assert result.text == " | ".join(["start", *received])
    assert [(d.run_id, d.status) for d in view.done] == [(active.run_id, "COMPLETED")]  # none started a run
    assert [text for role, text in await _texts(app) if role == "user"] == ["start", *received]
    messages = await app.store.get_thread_messages("busy", "everyone")
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", *["user"] * len(SENT), "assistant"]
