"""Tracing: spans of a run collected with an in-memory exporter across a worker restart that forces replay."""

from __future__ import annotations

import collections
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.contrib.opentelemetry import TracingInterceptor

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.usage import Usage
from tempo_agents.telemetry import instrument
from tempo_agents.telemetry.activity_interceptor import MODEL_STEP_SPAN, TOOL_CALL_SPAN
from tests.conftest import AppFactory


async def lookup(data: dict[str, Any], ctx: ToolContext) -> Any:
    return {"balance": 1200}


async def charge(data: dict[str, Any], ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"phase": "confirm", "amount": data["amount"]})
    return {"charged": data["amount"]}


def usage(tokens_in: int, tokens_out: int) -> Usage:
    return Usage(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)


def payments_agent() -> Agent:
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {}, id="call-lookup")], usage=usage(10, 3)),
            ScriptedResponse(
                tool_calls=[ScriptedToolCall("charge", {"amount": 990}, id="call-charge")], usage=usage(20, 4)
            ),
            ScriptedResponse(text="Charged 990.", usage=usage(30, 5)),
        ],
        model_id="payments-v1",
    )
    tools = {
        "lookup": create_tool(id="lookup", description="Reads the balance", execute=lookup),
        "charge": create_tool(id="charge", description="Charges a card", execute=charge),
    }
    return Agent(id="payments", model=model, tools=tools)


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def names(spans: list[ReadableSpan]) -> collections.Counter[str]:
    return collections.Counter(span.name for span in spans)


async def test_one_span_per_model_step_and_tool_call_across_a_worker_restart(make_app: AppFactory) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = make_app([payments_agent()])
    instrument(app, tracer_provider=provider)

    # No workflow stays cached: every workflow task of both workers replays the run's history from the start.
    async with app.worker(max_cached_workflows=0):
        first = await app.agent("payments").generate("pay my bill")
    assert first.finish_reason == "suspended"
    before_restart = len(exporter.get_finished_spans())
    assert before_restart > 0

    async with app.worker(max_cached_workflows=0):  # a new worker: the run's history is replayed on it
        resumed = await app.agent("payments").resume_generate({"confirmed": True}, run_id=first.run_id)
    assert resumed.finish_reason == "stop"
    assert resumed.text == "Charged 990."

    spans = list(exporter.get_finished_spans())
    steps = sorted((attributes(s) for s in spans if s.name == MODEL_STEP_SPAN), key=lambda a: a["tempo_agents.step"])
    assert [a["tempo_agents.step"] for a in steps] == [0, 1, 2]
    assert [(a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) for a in steps] == [
        (10, 3),
        (20, 4),
        (30, 5),
    ]
    assert [a["gen_ai.response.finish_reasons"] for a in steps] == [("tool-calls",), ("tool-calls",), ("stop",)]
    assert {a["gen_ai.request.model"] for a in steps} == {"scripted/payments-v1"}

    calls = [attributes(s) for s in spans if s.name == TOOL_CALL_SPAN]
    outcomes = sorted((a["gen_ai.tool.call.id"], a["tempo_agents.round"], a["tempo_agents.outcome"]) for a in calls)
    assert outcomes == [("call-charge", 0, "suspended"), ("call-charge", 1, "result"), ("call-lookup", 0, "result")]
    assert {a["gen_ai.tool.name"] for a in calls} == {"lookup", "charge"}
    assert all(a["tempo_agents.run_id"] == first.run_id for a in [*steps, *calls])

    # Temporal's workflow-side spans: made once, never again when a worker replays the history.
    counted = names(spans)
    assert counted["StartWorkflow:AgentRunWorkflow"] == 1
    assert counted["RunWorkflow:AgentRunWorkflow"] == 1
    assert counted["StartActivity:tempo_agents.model_step"] == 3
    assert counted["RunActivity:tempo_agents.model_step"] == 3
    assert counted["StartActivity:tempo_agents.tool_call"] == 3
    assert counted["RunActivity:tempo_agents.tool_call"] == 3
    assert counted["HandleUpdate:resume"] == 1

    # One trace, from the client's start to the last model step; ours are children of the activity spans.
    # (The client's resume call is a trace of its own; the workflow's handling of it is in the run's.)
    run_spans = [s for s in spans if s.name != "StartWorkflowUpdate:resume"]
    assert len({s.context.trace_id for s in run_spans if s.context}) == 1
    run_activity_ids = {s.context.span_id for s in spans if s.name.startswith("RunActivity:") and s.context}
    assert all(
        s.parent is not None and s.parent.span_id in run_activity_ids
        for s in spans
        if s.name in (MODEL_STEP_SPAN, TOOL_CALL_SPAN)
    )


async def test_instrumenting_again_replaces_the_earlier_tracing(make_app: AppFactory) -> None:
    exporters = [InMemorySpanExporter(), InMemorySpanExporter()]
    app = make_app([payments_agent()])
    for exporter in exporters:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        instrument(app, tracer_provider=provider)
    assert (
        len([i for i in app.client.config(active_config=True)["interceptors"] if isinstance(i, TracingInterceptor)])
        == 1
    )
    async with app.worker():
        run = await app.agent("payments").generate("pay my bill")
    assert run.finish_reason == "suspended"
    assert exporters[0].get_finished_spans() == ()
    assert names(list(exporters[1].get_finished_spans()))["RunWorkflow:AgentRunWorkflow"] == 1


async def test_an_approved_call_is_traced_as_an_approval_then_its_result(make_app: AppFactory) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {}, id="call-lookup")]), ScriptedResponse(text="Ok.")]
    )
    tool = create_tool(id="lookup", description="Reads the balance", execute=lookup, require_approval=True)
    app = make_app([Agent(id="careful", model=model, tools={"lookup": tool})])
    instrument(app, tracer_provider=provider)
    async with app.worker():
        first = await app.agent("careful").generate("balance?")
        assert first.finish_reason == "suspended"
        stream = await app.approve_tool_call("careful", run_id=first.run_id, answered_by="ops-alice")
        assert (await stream.result()).finish_reason == "stop"
    calls = sorted((attributes(s) for s in exporter.get_finished_spans() if s.name == TOOL_CALL_SPAN),
                   key=lambda a: a["tempo_agents.round"])  # fmt: skip
    assert [(a["tempo_agents.round"], a["tempo_agents.outcome"]) for a in calls] == [(0, "approval"), (1, "result")]
    assert (calls[1]["tempo_agents.resolution"], calls[1]["tempo_agents.answered_by"]) == ("approve", "ops-alice")
    assert "tempo_agents.resolution" not in calls[0]
