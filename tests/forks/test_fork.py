"""``app.fork``: a new run from another's transcript before a step, with edits; the original is never changed."""

from __future__ import annotations

import asyncio
import collections
import json
from typing import Any

import pytest
from temporalio.client import Client

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, closed_history, running_worker
from tests.support.agents import clerk_agent, confirm_tool, delegate, scripted_agent
from tests.support.fork_agents import by_turn, call, lookup_tool

MEMORY = {"thread": "trip", "resource": "ada"}


async def original_state(app: App, client: Client, run_id: str) -> tuple[Any, ...]:
    """Everything of a run a fork must leave byte for byte: journal, transcript, memory thread, workflow history."""
    journal = [(e.offset, e.chunk) for e in await app.store.read_chunks(run_id, 0, 100_000)]
    transcript = await app.store.get_transcript(run_id)
    thread = await app.store.get_thread_messages(MEMORY["thread"], MEMORY["resource"])
    events = (await client.get_workflow_handle(run_id).fetch_history()).events
    history = [event.SerializeToString(deterministic=True) for event in events]  # maps in key order
    return journal, transcript, thread, history


def texts(request: ModelRequest) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in request.messages]


async def test_a_fork_after_a_model_step_starts_from_the_originals_transcript_and_leaves_it_unchanged(
    make_app: AppFactory, client: Client
) -> None:
    executed: collections.Counter[str] = collections.Counter()
    model = by_turn(
        [
            ScriptedResponse(text="Checking Paris.", tool_calls=[call("Paris", "c1")]),
            ScriptedResponse(text="Now Rome.", tool_calls=[call("Rome", "c2")]),
            ScriptedResponse(text="Both are clear."),
        ]
    )
    fork_model = by_turn(
        [
            ScriptedResponse(text="unused"),
            ScriptedResponse(text="Then Oslo.", tool_calls=[call("Oslo", "f1")]),
            ScriptedResponse(text="Oslo has snow."),
        ]
    )
    tools = {"lookup": lookup_tool(executed)}
    app = make_app(
        [
            Agent(id="travel", model=model, tools=tools, instructions="Plan trips."),
            Agent(id="travel-v2", model=fork_model, tools=tools, instructions="Plan trips carefully."),
        ]
    )
    async with running_worker(app):
        original = await app.generate("travel", "Weather for my trip?", memory=MEMORY, auto_resume_suspended_tools=True)
        assert original.text.endswith("Both are clear.")
        await closed_history(client, original.run_id)
        before = await original_state(app, client, original.run_id)

        fork = await app.fork(original.run_id, at_step=1, agent_id="travel-v2", messages="What about Oslo?")
        forked = await fork.result()
        await closed_history(client, fork.run_id)
        after = await original_state(app, client, original.run_id)

    assert fork.run_id != original.run_id
    assert forked.text == "Then Oslo.Oslo has snow."
    # The fork's model read the original up to its step 1 (system, input, step 0 and its tool result), then the edit.
    first = fork_model.requests[0]
    assert texts(first) == [
        ("system", "Plan trips carefully."),
        ("user", "Weather for my trip?"),
        ("assistant", "Checking Paris."),
        ("tool", ""),
        ("user", "What about Oslo?"),
    ]
    assert first.messages[3].tool_results[0].result == {"city": "Paris", "sky": "clear"}
    assert executed == {"Paris": 1, "Rome": 1, "Oslo": 1}
    start = forked.chunks[0].model_dump(mode="json", by_alias=True)
    assert start["type"] == "start"
    assert start["payload"] == {"agentId": "travel-v2", "forkOf": {"runId": original.run_id, "step": 1}}
    assert before == after
    # The fork did not write the original's thread (it has no memory of its own unless given).
    assert await app.store.get_thread_messages(MEMORY["thread"], MEMORY["resource"]) == before[2]
    description = await client.get_workflow_handle(fork.run_id).describe()
    assert (await description.memo()) == {"forkOf": {"runId": original.run_id, "step": 1}}
    async with asyncio.timeout(60):  # visibility is eventually consistent: it lists the fork once it indexed it
        while await app.list_forks(original.run_id) != [fork.run_id]:
            await asyncio.sleep(0.2)


async def test_reuse_answers_matching_calls_from_the_original_and_runs_the_others(
    make_app: AppFactory, client: Client
) -> None:
    """Between parallel calls: of a step's two calls, the one with the original's exact arguments is answered from
    the original's outcome (the tool never runs), the one with other arguments runs; ``rerun`` runs them all."""
    executed: collections.Counter[str] = collections.Counter()
    responses = [
        ScriptedResponse(tool_calls=[call("Paris", "p"), call("Rome", "r")]),
        ScriptedResponse(text="Done."),
    ]
    fork_responses = [
        ScriptedResponse(tool_calls=[call("Paris", "p2"), call("Oslo", "o2")]),
        ScriptedResponse(text="Done again."),
    ]
    tools = {"lookup": lookup_tool(executed)}
    app = make_app(
        [
            Agent(id="travel", model=by_turn(responses), tools=tools),
            Agent(id="cheap", model=by_turn(fork_responses), tools=tools),
        ]
    )
    async with running_worker(app):
        original = await app.generate("travel", "Weather?")
        assert executed == {"Paris": 1, "Rome": 1}
        await closed_history(client, original.run_id)
        before = await original_state(app, client, original.run_id)
        reused = await (await app.fork(original.run_id, at_step=0, agent_id="cheap", reuse="tools")).result()
        assert executed == {"Paris": 1, "Rome": 1, "Oslo": 1}
        rerun = await (
            await app.fork(original.run_id, at_step=0, agent_id="cheap", reuse="tools", rerun=["lookup"])
        ).result()
        await closed_history(client, reused.run_id)
        await closed_history(client, rerun.run_id)
        after = await original_state(app, client, original.run_id)

    assert executed == {"Paris": 2, "Rome": 1, "Oslo": 2}
    marks = [c.model_dump(mode="json", by_alias=True) for c in reused.chunks if c.type == "data-tool-reused"]
    assert [m["data"] for m in marks] == [
        {"toolCallId": "p2", "toolName": "lookup", "fromRunId": original.run_id, "fromToolCallId": "p", "fromStep": 0}
    ]
    results = {r.payload.tool_call_id: r.payload.result for r in reused.tool_results}
    assert results == {"p2": {"city": "Paris", "sky": "clear"}, "o2": {"city": "Oslo", "sky": "snow"}}
    assert not [c for c in rerun.chunks if c.type == "data-tool-reused"]
    assert before == after


async def test_a_fork_of_a_waiting_run_waits_on_its_own_and_the_original_still_waits(
    make_app: AppFactory, client: Client
) -> None:
    """At a suspension: the fork asks the model again at the step that suspended; its call waits for its own
    answer, and answering it leaves the original waiting as it was. A fork past the waiting call is refused."""
    seen: list[Any] = []
    responses = [ScriptedResponse(tool_calls=[ScriptedToolCall("confirm", {"amount": 12}, id="pay")]),
                 ScriptedResponse(text="Paid.")]  # fmt: skip
    app = make_app([Agent(id="clerk", model=by_turn(responses), tools={"confirm": confirm_tool(seen)})])
    async with running_worker(app):
        original = await app.generate("clerk", "Pay the invoice")
        assert original.finish_reason == "suspended"
        pending = await app.pending(original.run_id)
        before = await original_state(app, client, original.run_id)
        with pytest.raises(ConfigurationError, match="did not end"):
            await app.fork(original.run_id, at_step=1)

        fork = await app.fork(original.run_id)  # the default: the last step whose calls all ended (0)
        waiting = await fork.result()
        assert waiting.finish_reason == "suspended"
        resumed = await app.resume_generate("clerk", {"ok": True}, run_id=fork.run_id)
        assert resumed.text == "Paid."
        await closed_history(client, fork.run_id)
        assert await app.pending(original.run_id) == pending
        after = await original_state(app, client, original.run_id)
    assert seen == [{"ok": True}]
    assert before == after


async def test_retry_runs_a_failed_run_again_from_its_last_good_step(make_app: AppFactory, client: Client) -> None:
    """A run whose model failed at step 1 is retried after the fix from step 1: step 0's tool is not run again
    (its result is copied), and the retry names the failed run as its origin."""
    executed: collections.Counter[str] = collections.Counter()
    fixed: list[bool] = []

    def respond(request: ModelRequest) -> ScriptedResponse:
        if sum(1 for m in request.messages if m.role == "assistant") == 0:
            return ScriptedResponse(tool_calls=[call("Paris", "c1")])
        if not fixed:
            raise ConfigurationError("the model's prompt template is broken")
        return ScriptedResponse(text="Paris is clear.")

    app = make_app([Agent(id="travel", model=ScriptedModel(respond), tools={"lookup": lookup_tool(executed)})])
    async with running_worker(app):
        failed = await app.generate("travel", "Weather in Paris?")
        assert failed.error is not None and "prompt template" in failed.error
        fixed.append(True)
        retried = await (await app.retry(failed.run_id)).result()
        await closed_history(client, retried.run_id)
    assert retried.text == "Paris is clear."
    assert executed == {"Paris": 1}
    start = retried.chunks[0].model_dump(mode="json", by_alias=True)
    assert start["payload"]["forkOf"] == {"runId": failed.run_id, "step": 1}


async def test_a_cancelled_run_and_a_sub_agents_run_can_be_forked(make_app: AppFactory, client: Client) -> None:
    """Inside a sub-agent: a child run (waiting for its person) is forked like any run, and answering the fork
    leaves the child and its parent waiting. A run cancelled while it waited is forked too."""
    seen: list[Any] = []
    clerk = {"clerk": clerk_agent(seen)}
    lead = scripted_agent("lead", [delegate("clerk", "pay the invoice", "k")], "Done.", agents=clerk)
    app = make_app([lead])
    async with running_worker(app):
        parent = await app.generate("lead", "go")
        child_id = f"{parent.run_id}-k"
        assert [p.tool_name for p in await app.pending(child_id, settle_seconds=60)] == ["confirm"]
        child_before = await original_state(app, client, child_id)

        fork = await app.fork(child_id)
        assert (await fork.result()).finish_reason == "suspended"
        paid = await app.resume_generate("clerk", {"ok": True}, run_id=fork.run_id)
        assert paid.text == "Paid 12."
        await closed_history(client, fork.run_id)
        assert [p.tool_name for p in await app.pending(child_id)] == ["confirm"]
        assert [p.tool_call_id for p in await app.pending(parent.run_id)] == ["k"]
        assert await original_state(app, client, child_id) == child_before

        await app.cancel_run(parent.run_id)
        await closed_history(client, parent.run_id)
        cancelled_before = await original_state(app, client, parent.run_id)
        again = await app.fork(parent.run_id, at_step=0, messages="Ask the clerk again")
        assert (await again.result()).finish_reason == "suspended"
        assert await original_state(app, client, parent.run_id) == cancelled_before
        await app.cancel_run(again.run_id)
    assert seen == [{"ok": True}]


async def test_a_forks_history_carries_a_reference_to_its_origin_not_its_transcript(
    make_app: AppFactory, client: Client
) -> None:
    """History stays linear: the fork's workflow input names the origin (run and step); the origin's messages and
    tool outputs (here a large one, reused by the fork) stay in the store and appear nowhere in the fork's history."""
    marker = "tide-table-" + "x" * 20_000

    async def tides(data: dict[str, Any]) -> str:
        return marker

    tool = create_tool(id="tides", description="Tide tables", execute=tides)
    responses = [
        ScriptedResponse(tool_calls=[ScriptedToolCall("tides", {"port": "Brest"}, id="t1")]),
        ScriptedResponse(text="High tide at noon."),
    ]
    app = make_app([Agent(id="sailor", model=by_turn(responses), tools={"tides": tool})])
    async with running_worker(app):
        original = await app.generate("sailor", "Secret question about Brest")
        fork = await app.fork(original.run_id, at_step=0, reuse="tools")
        forked = await fork.result()
        history = await closed_history(client, fork.run_id)
    assert forked.text == "High tide at noon."
    assert [r.payload.result for r in forked.tool_results] == [marker]
    recorded = b"".join(event.SerializeToString() for event in history.events)  # payloads as their JSON bytes
    assert b"tide-table-" not in recorded and b"Secret question" not in recorded
    started = history.events[0].workflow_execution_started_event_attributes
    run_input = json.loads(started.input.payloads[0].data)
    assert run_input["messages"] == []
    assert run_input["options"]["fork"] == {
        "runId": original.run_id, "step": 0, "reuse": "tools", "rerun": [], "replaceInput": None
    }  # fmt: skip


async def test_a_fork_between_parallel_calls_reuses_the_one_that_ended_and_waits_on_the_other(
    make_app: AppFactory, client: Client
) -> None:
    """A step called ``lookup`` and ``confirm`` in parallel; ``lookup`` ended, ``confirm`` waits for a person. The fork
    at that step with ``reuse="tools"`` answers ``lookup`` from the original (not executed) and asks its own person
    about ``confirm``; the original still waits on its call."""
    executed: collections.Counter[str] = collections.Counter()
    seen: list[Any] = []
    step = ScriptedResponse(tool_calls=[call("Paris", "look"), ScriptedToolCall("confirm", {"amount": 30}, id="pay")])
    responses = [step, ScriptedResponse(text="Booked.")]
    tools = {"lookup": lookup_tool(executed), "confirm": confirm_tool(seen)}
    app = make_app([Agent(id="booker", model=by_turn(responses), tools=tools)])
    async with running_worker(app):
        original = await app.generate("booker", "Book Paris")
        assert original.finish_reason == "suspended"
        assert [p.tool_call_id for p in await app.pending(original.run_id)] == ["pay"]
        before = await original_state(app, client, original.run_id)

        fork = await app.fork(original.run_id, reuse="tools")  # the default fork point: step 0, the parallel step
        waiting = await fork.result()
        assert waiting.finish_reason == "suspended"
        assert [c.type for c in waiting.chunks].count("data-tool-reused") == 1
        assert [p.tool_call_id for p in await app.pending(fork.run_id)] == ["pay"]
        done = await app.resume_generate("booker", {"ok": True}, run_id=fork.run_id)
        assert done.text == "Booked."
        await closed_history(client, fork.run_id)
        assert [p.tool_call_id for p in await app.pending(original.run_id)] == ["pay"]
        after = await original_state(app, client, original.run_id)
    assert executed == {"Paris": 1}
    assert seen == [{"ok": True}]
    assert before == after
