"""A steer is a user message delivered into a running run: the model sees it at the run's next model step, the
journal shows it (who sent it), the transcript and the thread keep it in order, and no new run starts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.errors import RunFinishedError
from tempo_agents.models.messages import Message, TextPart
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import RunResult
from tempo_agents.workflows.steering import STEER, SteerRequest
from tests.conftest import AppFactory, running_worker

MEMORY = {"thread": "t-steer", "resource": "u-1"}


def _conversation(request: ModelRequest) -> list[tuple[str, str]]:
    """The request's messages as (role, what it says), without the system message."""
    seen = []
    for message in request.messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            seen.append(("tool", ",".join(str(p.result) for p in message.tool_results)))
        elif message.tool_calls:
            seen.append(("assistant", ",".join(c.tool_name for c in message.tool_calls)))
        else:
            seen.append((message.role, message.text))
    return seen


async def _received(app: App, run_id: str, count: int) -> None:
    """Wait until the run has received ``count`` steers (what the workflow knows, not a guess from timing)."""
    handle = app.client.get_workflow_handle(run_id)
    for _ in range(500):
        if await handle.query(AgentRunWorkflow.steers_received) >= count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the run received fewer than {count} steers")


class Gate:
    """An event a model step or a tool waits on, and one it sets when it gets there."""

    def __init__(self) -> None:
        self.reached = asyncio.Event()
        self.release = asyncio.Event()

    async def hold(self) -> None:
        self.reached.set()
        await self.release.wait()


async def test_a_steer_sent_while_a_model_step_streams_is_seen_at_the_next_step(make_app: AppFactory) -> None:
    gate = Gate()

    async def script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0:
            await gate.hold()
            return ScriptedResponse(text="Looking.", tool_calls=[ScriptedToolCall("weather", {"city": "Oslo"})])
        return ScriptedResponse(text="It is 4 degrees Celsius.")

    model = ScriptedModel(script)
    weather = create_tool(id="weather", description="Weather", execute=lambda d: {"temp": 39, "unit": "F"})
    app = make_app([Agent(id="w", model=model, tools={"weather": weather})])
    async with running_worker(app):
        stream = await app.stream("w", "Weather in Oslo?", memory=MEMORY)
        await gate.reached.wait()
        steering = asyncio.create_task(app.steer(stream.run_id, "Answer in Celsius", sent_by="alice"))
        await _received(app, stream.run_id, 1)
        gate.release.set()
        accepted = await steering
        result = await stream.result()

    assert (accepted.status, accepted.step, accepted.position) == ("delivered", 1, 1)
    assert result.finish_reason == "stop"
    assert len(model.requests) == 2  # one run, two steps
    assert _conversation(model.requests[1]) == [
        ("user", "Weather in Oslo?"),
        ("assistant", "weather"),
        ("tool", "{'temp': 39, 'unit': 'F'}"),
        ("user", "Answer in Celsius"),
    ]
    journal = [entry.chunk for entry in await app.store.read_chunks(stream.run_id)]
    types = [chunk["type"] for chunk in journal]
    steer = next(chunk for chunk in journal if chunk["type"] == "data-user-message")
    assert steer["from"] == "USER"
    assert steer["data"]["sentBy"] == "alice"
    assert steer["data"]["text"] == "Answer in Celsius"
    assert steer["data"]["step"] == 1
    assert types.index("data-user-message") < types.index("step-start", types.index("tool-result"))
    thread = await app.store.get_thread_messages("t-steer", "u-1")
    roles = [(m["role"], m["content"][0].get("text") if m["role"] == "user" else None) for m in thread]
    assert roles == [
        ("user", "Weather in Oslo?"),
        ("assistant", None),
        ("tool", None),
        ("user", "Answer in Celsius"),
        ("assistant", None),
    ]


async def test_a_steer_sent_while_tools_run_is_seen_at_the_next_step(make_app: AppFactory) -> None:
    gate = Gate()

    async def slow_lookup(data: dict[str, Any]) -> str:
        await gate.hold()
        return "found"

    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"q": "x"})]), ScriptedResponse(text="Done.")]
    )
    lookup = create_tool(id="lookup", description="Looks up", execute=slow_lookup)
    app = make_app([Agent(id="l", model=model, tools={"lookup": lookup})])
    async with running_worker(app):
        stream = await app.stream("l", "Look it up")
        await gate.reached.wait()
        steering = asyncio.create_task(app.steer(stream.run_id, "Only the first result"))
        await _received(app, stream.run_id, 1)
        gate.release.set()
        accepted = await steering
        result = await stream.result()

    assert (accepted.status, accepted.step) == ("delivered", 1)
    assert result.text == "Done."
    assert _conversation(model.requests[1])[-2:] == [("tool", "found"), ("user", "Only the first result")]
    steer = next(c for c in result.chunks if c.type == "data-user-message")
    assert steer.model_dump(by_alias=True)["data"]["sentBy"] is None


async def test_a_steer_sent_while_the_run_waits_is_kept_for_the_step_after_the_answer(make_app: AppFactory) -> None:
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("delete", {"path": "a"})]), ScriptedResponse(text="Deleted.")]
    )
    delete = create_tool(id="delete", description="Deletes", execute=lambda d: "deleted", require_approval=True)
    app = make_app([Agent(id="d", model=model, tools={"delete": delete})])
    async with running_worker(app):
        first = await app.generate("d", "Delete a")
        assert first.finish_reason == "suspended"
        kept = await app.steer(first.run_id, "And tell me when it is done", sent_by="bob")
        assert (kept.status, kept.step) == ("kept", None)
        assert len(model.requests) == 1  # the steer started nothing
        resumed = await app.approve_tool_call("d", run_id=first.run_id)
        result = await resumed.result()

    assert result.text == "Deleted."
    assert _conversation(model.requests[1])[-2:] == [("tool", "deleted"), ("user", "And tell me when it is done")]


async def test_a_steer_to_a_finished_run_is_refused_so_its_sender_can_start_a_new_run(make_app: AppFactory) -> None:
    model = ScriptedModel([ScriptedResponse(text="Hello.")])
    app = make_app([Agent(id="h", model=model)])
    async with running_worker(app):
        result = await app.generate("h", "Hi")
        with pytest.raises(RunFinishedError) as refused:
            await app.steer(result.run_id, "One more thing")
    assert refused.value.run_id == result.run_id
    assert len(model.requests) == 1


async def test_a_steer_during_the_last_model_step_is_refused_not_lost(make_app: AppFactory) -> None:
    gate = Gate()

    async def script(request: ModelRequest) -> ScriptedResponse:
        await gate.hold()
        return ScriptedResponse(text="All done.")

    app = make_app([Agent(id="last", model=ScriptedModel(script))])
    async with running_worker(app):
        stream = await app.stream("last", "Go")
        await gate.reached.wait()
        steering = asyncio.create_task(app.steer(stream.run_id, "Wait, also this"))
        await _received(app, stream.run_id, 1)
        signalled = SteerRequest(message=Message(role="user", content=[TextPart(text="And this")]), sent_by="carol")
        await app.client.get_workflow_handle(stream.run_id).signal(STEER, signalled)
        await _received(app, stream.run_id, 2)
        gate.release.set()
        with pytest.raises(RunFinishedError):
            await steering
        result = await stream.result()
        outcome = RunResult.model_validate(await app.client.get_workflow_handle(stream.run_id).result())
    assert result.text == "All done."
    assert outcome.undelivered_steers == [signalled]  # the update's sender was told; a signal's is not
    journal = [entry.chunk["type"] for entry in await app.store.read_chunks(stream.run_id)]
    assert "data-user-message" not in journal


async def test_two_steers_sent_at_once_are_both_delivered_in_the_order_the_run_received_them(
    make_app: AppFactory,
) -> None:
    gate = Gate()

    async def script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0:
            await gate.hold()
            return ScriptedResponse(tool_calls=[ScriptedToolCall("noop", {})])
        return ScriptedResponse(text="Noted.")

    model = ScriptedModel(script)
    noop = create_tool(id="noop", description="Nothing", execute=lambda d: "ok")
    app = make_app([Agent(id="n", model=model, tools={"noop": noop})])
    async with running_worker(app):
        stream = await app.stream("n", "Start")
        await gate.reached.wait()
        ready = asyncio.Barrier(3)

        async def send(text: str, who: str) -> Any:
            await ready.wait()
            return await app.steer(stream.run_id, text, sent_by=who)

        sends = [asyncio.create_task(send("from tab A", "a")), asyncio.create_task(send("from tab B", "b"))]
        await ready.wait()  # both senders are ready before either sends
        await _received(app, stream.run_id, 2)
        gate.release.set()
        accepted = await asyncio.gather(*sends)
        await stream.result()

    positions = {a.position for a in accepted}
    assert positions == {1, 2}
    assert {a.step for a in accepted} == {1}
    by_position = {a.position: text for a, text in zip(accepted, ["from tab A", "from tab B"], strict=True)}
    seen = [text for role, text in _conversation(model.requests[1]) if role == "user"][1:]
    assert seen == [by_position[1], by_position[2]]
    journal = [entry.chunk for entry in await app.store.read_chunks(stream.run_id)]
    steers = [c["data"] for c in journal if c["type"] == "data-user-message"]
    assert [(s["position"], s["text"]) for s in steers] == [(1, by_position[1]), (2, by_position[2])]
