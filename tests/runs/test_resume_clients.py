"""Resuming as other clients do: racing callers in other processes, the real ``temporal`` CLI, retries
with an idempotency key, a tool that mutates its input, and a client that follows a run for days."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.errors import ResumeError
from tempo_agents.journal.chunks import FinishChunk
from tests.conftest import AppFactory, running_worker, temporal_binary

ROOT = Path(__file__).resolve().parents[2]
NOT_SUSPENDED_CODES = {"AGENT_RESUME_NOT_SUSPENDED", "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED"}
"""The losers of a race are told the call is no longer suspended (the run may have gone on already)."""


class Order(BaseModel):
    amount: int
    items: list[str]


class Answer(BaseModel):
    confirmed: bool
    note: str = ""


def order_tool(seen: list[dict[str, Any]], *, schema: type[BaseModel] | dict[str, Any] = Order) -> Any:
    """Suspends once; on resume records the input it got back and the resume data."""

    async def execute(data: Any, ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            # A tool that changes its input object before suspending must get the accepted input back.
            if isinstance(data, dict):
                data["amount"] = 0
                data["items"].append("mutated")
            else:
                data.amount = 0
                data.items.append("mutated")
            return await ctx.suspend({"question": "confirm?"})
        got = data if isinstance(data, dict) else data.model_dump()
        seen.append({"input": got, "resume_data": ctx.resume_data})
        return {"charged": got["amount"], "note": ctx.resume_data.get("note", "")}

    return create_tool(
        id="order-tool", description="Places an order", input_schema=schema, resume_schema=Answer, execute=execute
    )


def order_agent(seen: list[dict[str, Any]], agent_id: str = "orders", **tool_options: Any) -> Agent:
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("order", {"amount": 990, "items": ["a"]}, id="call-1")]),
            ScriptedResponse(text="Ordered."),
        ]
    )
    return Agent(id=agent_id, model=model, tools={"order": order_tool(seen, **tool_options)})


def address(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


async def test_racing_resumes_from_other_processes_exactly_one_wins(
    make_app: AppFactory, temporal_env: WorkflowEnvironment
) -> None:
    seen: list[dict[str, Any]] = []
    app = make_app([order_agent(seen)])
    async with running_worker(app):
        first = await app.agent("orders").generate("order")
        assert first.finish_reason == "suspended"
        racers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.support.clients.raw_resumer",
                    address(temporal_env),
                    first.run_id,
                    json.dumps({"confirmed": True, "note": f"racer-{n}"}),
                ],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for n in range(4)
        ]
        loop = asyncio.get_running_loop()
        for racer in racers:  # every caller has read `pending` before any sends
            assert racer.stdout is not None
            assert (await loop.run_in_executor(None, racer.stdout.readline)).strip() == "ready"
        for racer in racers:
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
        outcomes = [json.loads((await loop.run_in_executor(None, r.communicate))[0]) for r in racers]
        result = await app.client.get_workflow_handle(first.run_id).result()

    winners = [n for n, outcome in enumerate(outcomes) if outcome["accepted"]]
    assert len(winners) == 1, outcomes
    losers = [outcome for outcome in outcomes if not outcome["accepted"]]
    assert {loser["code"] for loser in losers} <= NOT_SUSPENDED_CODES, losers
    assert [s["resume_data"]["note"] for s in seen] == [f"racer-{winners[0]}"]  # the winner's data, once
    assert result["finishReason"] == "stop"


async def test_racing_resumes_through_the_python_api(make_app: AppFactory) -> None:
    seen: list[dict[str, Any]] = []
    app = make_app([order_agent(seen)])
    async with running_worker(app):
        first = await app.agent("orders").generate("order")
        assert first.finish_reason == "suspended", first
        assert [p.tool_call_id for p in await app.pending(first.run_id)] == ["call-1"]

        async def answer(n: int) -> str:
            try:
                stream = await app.agent("orders").resume_stream(
                    {"confirmed": True, "note": f"caller-{n}"}, run_id=first.run_id, tool_call_id="call-1"
                )
            except ResumeError as error:
                return error.code
            await stream.result()
            return "accepted"

        outcomes = await asyncio.gather(*(answer(n) for n in range(5)))
    assert outcomes.count("accepted") == 1
    assert set(outcomes) - {"accepted"} <= NOT_SUSPENDED_CODES, outcomes
    assert len(seen) == 1


async def test_a_retried_resume_with_the_same_key_resumes_once(make_app: AppFactory) -> None:
    seen: list[dict[str, Any]] = []
    app = make_app([order_agent(seen)])
    async with running_worker(app):
        first = await app.agent("orders").generate("order")
        data = {"confirmed": True, "note": "once"}
        one = await app.agent("orders").resume_stream(data, run_id=first.run_id, idempotency_key="req-7")
        again = await app.agent("orders").resume_stream(data, run_id=first.run_id, idempotency_key="req-7")
        assert again.offset == one.offset  # the same answer: the resumed segment starts at the same chunk
        results = [await one.result(), await again.result()]
        with pytest.raises(ResumeError) as other:
            await app.agent("orders").resume_stream(data, run_id=first.run_id, idempotency_key="req-8")
    assert [r.text for r in results] == ["Ordered.", "Ordered."]
    assert len(seen) == 1
    assert other.value.code == "AGENT_RESUME_NOT_SUSPENDED"


def cli_update(env: WorkflowEnvironment, run_id: str, request: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            temporal_binary(),
            "workflow",
            "update",
            "execute",
            "--address",
            address(env),
            "--workflow-id",
            run_id,
            "--name",
            "resume",
            "--input",
            json.dumps(request),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_the_temporal_cli_gets_the_validation_error_and_the_run_keeps_waiting(
    make_app: AppFactory, temporal_env: WorkflowEnvironment
) -> None:
    seen: list[dict[str, Any]] = []
    app = make_app([order_agent(seen)])
    async with running_worker(app):
        first = await app.agent("orders").generate("order")
        loop = asyncio.get_running_loop()
        bad = await loop.run_in_executor(
            None, cli_update, temporal_env, first.run_id, {"toolCallId": "call-1", "data": {"confirmed": "perhaps"}}
        )
        still_waiting = [p.tool_call_id for p in await app.pending(first.run_id)]
        good = await loop.run_in_executor(
            None, cli_update, temporal_env, first.run_id, {"toolCallId": "call-1", "data": {"confirmed": True}}
        )
        result = await app.client.get_workflow_handle(first.run_id).result()
    assert bad.returncode != 0
    assert (
        "Tool input validation failed for order-tool. Please fix the following errors and try again:\n"
        "- confirmed: 'perhaps' is not of type 'boolean'" in bad.stdout + bad.stderr
    )
    assert still_waiting == ["call-1"]
    assert good.returncode == 0, good.stderr
    assert "call-1" in good.stdout
    assert seen == [{"input": {"amount": 990, "items": ["a"]}, "resume_data": {"confirmed": True}}]
    assert result["finishReason"] == "stop"


@pytest.mark.parametrize("schema", [Order, Order.model_json_schema()], ids=["pydantic", "json-schema"])
async def test_a_resumed_call_gets_its_input_as_accepted(
    make_app: AppFactory, schema: type[BaseModel] | dict[str, Any]
) -> None:
    seen: list[dict[str, Any]] = []
    app = make_app([order_agent(seen, schema=schema)])
    async with running_worker(app):
        first = await app.agent("orders").generate("order")
        await app.agent("orders").resume_generate({"confirmed": True}, run_id=first.run_id)
    assert seen == [{"input": {"amount": 990, "items": ["a"]}, "resume_data": {"confirmed": True}}]


async def test_attach_follows_a_run_across_suspensions(make_app: AppFactory) -> None:
    async def ask(data: dict[str, Any], ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            return await ctx.suspend({"question": data["q"]})
        return ctx.resume_data

    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("ask", {"q": "one?"}, id="q1")]),
            ScriptedResponse(tool_calls=[ScriptedToolCall("ask", {"q": "two?"}, id="q2")]),
            ScriptedResponse(text="Thanks."),
        ]
    )
    tool = create_tool(id="ask", description="Asks", execute=ask)
    app = make_app([Agent(id="asker", model=model, tools={"ask": tool}, default_options={"max_steps": 5})])
    async with running_worker(app):
        first = await app.agent("asker").stream("go")
        watcher = app.attach(first.run_id, follow="run")
        watched = asyncio.create_task(_collect(watcher))
        await first.result()
        await (await app.agent("asker").resume_stream({"a": 1}, run_id=first.run_id)).result()
        await (await app.agent("asker").resume_stream({"a": 2}, run_id=first.run_id)).result()
        chunks = await asyncio.wait_for(watched, timeout=30)
        segment_only = [c async for c in App.attach(app, first.run_id).full_stream]
    finishes = [c.payload.step_result.reason for c in chunks if isinstance(c, FinishChunk)]
    assert finishes == ["suspended", "suspended", "stop"]
    assert [c.offset for c in chunks] == list(range(len(chunks)))  # every chunk once, in order
    assert [c.type for c in segment_only][-1] == "finish" and len(segment_only) < len(chunks)


async def _collect(stream: Any) -> list[Any]:
    return [chunk async for chunk in stream.full_stream]
