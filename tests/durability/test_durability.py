"""Durability: worker restarts mid-run, linear history, continue-as-new."""

from __future__ import annotations

import asyncio
import collections
import json
import uuid
from pathlib import Path
from typing import Any

from temporalio.client import Client

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, continue_as_new_server, running_worker
from tests.support.agents import FlakyModel

DURABLE_TYPES = {"start", "step-start", "tool-call", "tool-result", "tool-error", "step-finish", "finish"}


async def journal(app: App, run_id: str) -> list[dict[str, Any]]:
    return [entry.chunk for entry in await app.store.read_chunks(run_id, 0, 100_000)]


def durable_identities(chunks: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    identities = []
    step = -1
    for chunk in chunks:
        if chunk["type"] == "step-start":
            step = chunk["payload"]["stepNumber"]
        if chunk["type"] in DURABLE_TYPES:
            identities.append((chunk["type"], chunk["payload"].get("toolCallId", ""), step))
    return identities


async def test_worker_restart_mid_run_finishes_without_rerunning_completed_tools(
    make_app: AppFactory,
) -> None:
    executions: collections.Counter[str] = collections.Counter()
    blocked = asyncio.Event()

    async def fast(data: dict[str, Any]) -> str:
        executions["fast"] += 1
        return "fast done"

    async def slow(data: dict[str, Any]) -> str:
        executions["slow"] += 1
        if executions["slow"] == 1:
            blocked.set()
            await asyncio.Event().wait()  # never returns: the worker is stopped meanwhile
        return "slow done"

    def script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0:
            return ScriptedResponse(
                text="Starting.", tool_calls=[ScriptedToolCall("fast", {}), ScriptedToolCall("slow", {})]
            )
        return ScriptedResponse(text="All done.")

    def build() -> Agent:
        return Agent(
            id="restart",
            model=ScriptedModel(script),
            tools={
                "fast": create_tool(id="fast", description="fast", execute=fast),
                "slow": create_tool(id="slow", description="slow", execute=slow),
            },
        )

    first = make_app([build()])
    async with running_worker(first):
        stream = await first.agent("restart").stream("go")
        await asyncio.wait_for(blocked.wait(), 30)
        for _ in range(200):
            if any(c["type"] == "tool-result" for c in await journal(first, stream.run_id)):
                break
            await asyncio.sleep(0.02)
    # The first worker is gone. A new App object (as in a new process) with a new worker takes over.
    second = App(agents=[build()], store=first.store.url, task_queue=first.task_queue, client=first.client)
    async with running_worker(second):
        result = await asyncio.wait_for(second.attach(stream.run_id).result(), 60)

    assert result.finish_reason == "stop"
    assert result.text == "Starting.All done."
    assert executions == {"fast": 1, "slow": 2}
    assert sorted(r.payload.result for r in result.tool_results) == ["fast done", "slow done"]
    identities = durable_identities(await journal(second, stream.run_id))
    duplicates = [i for i, n in collections.Counter(identities).items() if n > 1]
    assert duplicates == []
    assert collections.Counter(t for t, _, _ in identities) == {
        "start": 1,
        "step-start": 2,
        "tool-call": 2,
        "tool-result": 2,
        "step-finish": 2,
        "finish": 1,
    }


async def test_retried_model_step_writes_a_reset_chunk(make_app: AppFactory) -> None:
    model = FlakyModel([ScriptedResponse(text="Hello there friend")])
    app = make_app([Agent(id="flaky", model=model)])
    async with running_worker(app):
        result = await app.agent("flaky").generate("hi")
        journal = [e.chunk["type"] for e in await app.store.read_chunks(result.run_id)]
    assert model.attempts[0] == 2
    assert journal[:4] == ["start", "step-start", "text-delta", "step-reset"]
    assert journal.count("step-start") == 1
    # The result keeps what a client keeps: the failed attempt's delta is dropped, the reset stays.
    assert [c.type for c in result.chunks][:4] == ["start", "step-start", "step-reset", "text-delta"]
    assert result.text == "Hello there friend"


async def history_bytes(client: Client, run_id: str) -> int:
    total = 0
    async for history in client.list_workflows(f"WorkflowId = '{run_id}'").map_histories():
        total += len(history.to_json())
    return total


async def test_history_grows_linearly_with_large_tool_outputs(make_app: AppFactory) -> None:
    steps = 30
    output_size = 20_000
    blob = "x" * output_size

    def script(request: ModelRequest) -> ScriptedResponse:
        if request.step < steps - 1:
            return ScriptedResponse(
                text=f"step {request.step}", tool_calls=[ScriptedToolCall("fetch", {"n": request.step})]
            )
        return ScriptedResponse(text="finished")

    tool = create_tool(id="fetch", description="Returns 20 KB", execute=lambda data: {"body": blob, "n": data["n"]})
    app = make_app([Agent(id="long", model=ScriptedModel(script), tools={"fetch": tool})])
    async with running_worker(app):
        result = await app.agent("long").generate("go", max_steps=steps)
        measured = await history_bytes(app.client, result.run_id)
    assert result.finish_reason == "stop" and result.steps == steps

    transcript = await app.store.get_transcript(result.run_id)
    sizes = [len(json.dumps(e.message)) for e in transcript]
    # What history would hold if every model step received the transcript so far.
    by_step: dict[int, int] = collections.defaultdict(int)
    for entry, size in zip(transcript, sizes, strict=True):
        by_step[entry.step] += size
    quadratic = sum(sum(v for s, v in by_step.items() if s < step) for step in range(steps))
    print(
        f"\nhistory for {steps} steps with {output_size} B tool outputs: measured {measured:,} B; "
        f"transcript-passing would be at least {quadratic:,} B"
    )
    assert quadratic > 8_000_000
    assert measured < 400_000
    assert measured * 20 < quadratic


async def test_continue_as_new_keeps_run_id_journal_and_transcript(tmp_path: Path) -> None:
    async with continue_as_new_server(30) as env:
        steps = 12

        def script(request: ModelRequest) -> ScriptedResponse:
            if request.step < steps - 1:
                return ScriptedResponse(
                    text=f"s{request.step} ", tool_calls=[ScriptedToolCall("echo", {"n": request.step})]
                )
            return ScriptedResponse(text="end")

        tool = create_tool(id="echo", description="Echo", execute=lambda data: data["n"])
        model = ScriptedModel(script)
        app = App(
            agents=[Agent(id="can", model=model, tools={"echo": tool})],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with running_worker(app):
            stream = await app.agent("can").stream("go", max_steps=steps)
            chunks = [c async for c in stream.full_stream]
            result = await stream.result()
            runs = [w async for w in app.client.list_workflows(f"WorkflowId = '{stream.run_id}'")]
            final = await app.client.get_workflow_handle(stream.run_id, result_type=RunResult).result()
        assert len(runs) >= 3, "the run should have continued as new at least twice"
        assert final.run_id == stream.run_id and final.steps == steps
        assert result.finish_reason == "stop"
        assert result.text == "".join(f"s{i} " for i in range(steps - 1)) + "end"
        assert [c.offset for c in chunks] == list(range(len(chunks)))
        kinds = [c.type for c in chunks]
        assert kinds.count("start") == 1 and kinds.count("finish") == 1
        assert kinds.count("step-start") == steps and kinds.count("step-finish") == steps
        assert [r.payload.result for r in result.tool_results] == list(range(steps - 1))
        # Every model step saw the whole conversation so far, across continue-as-new boundaries.
        assert [len(r.messages) for r in model.requests] == [1 + 2 * i for i in range(steps)]


async def test_answers_outlive_continue_as_new(tmp_path: Path) -> None:
    async with continue_as_new_server(30) as env:
        steps = 10

        def script(request: ModelRequest) -> ScriptedResponse:
            if request.step == 0:
                return ScriptedResponse(tool_calls=[ScriptedToolCall("guarded", {"n": 0}, id="call-g")])
            if request.step < steps - 1:
                return ScriptedResponse(tool_calls=[ScriptedToolCall("echo", {"n": request.step})])
            return ScriptedResponse(text="end")

        echo = create_tool(id="echo", description="Echo", execute=lambda data: data["n"])
        guarded = create_tool(id="guarded", description="Guarded", require_approval=True, execute=lambda data: 1)
        app = App(
            agents=[Agent(id="can", model=ScriptedModel(script), tools={"echo": echo, "guarded": guarded})],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with running_worker(app):
            first = await app.generate("can", "go", max_steps=steps)
            assert first.finish_reason == "suspended"
            resumed = await app.approve_tool_call("can", run_id=first.run_id, answered_by="dana")
            assert (await resumed.result()).finish_reason == "stop"
            runs = [w async for w in app.client.list_workflows(f"WorkflowId = '{first.run_id}'")]
            answers = await app.queries(first.run_id).answers()
        assert len(runs) >= 2, "the run should have continued as new"
        assert [(a.tool_call_id, a.action, a.answered_by) for a in answers] == [("call-g", "approve", "dana")]
