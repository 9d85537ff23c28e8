"""Sub-agents as tools (reference §5.1): each call of ``agent-<key>`` runs the sub-agent as a child workflow."""

from __future__ import annotations

import asyncio
import io
from datetime import timedelta
from typing import Any, cast

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from tempo_agents import (
    Agent,
    DelegationComplete,
    DelegationHooks,
    DelegationStart,
    ScriptedModel,
    ScriptedResponse,
    ScriptedToolCall,
    ToolContext,
    create_tool,
)
from tempo_agents.activity_options import LOCAL_TASK_TIMEOUT, ActivityOptions
from tempo_agents.cli.printing import ChunkPrinter
from tempo_agents.journal.chunks import (
    DataChunk,
    ToolErrorChunk,
    ToolOutputChunk,
    ToolOutputDeniedChunk,
    ToolResultChunk,
)
from tests.conftest import AppFactory, closed_history, running_worker
from tests.support.agents import FlakyModel, clerk_agent, delegate, scripted_agent

WORKFLOW_TASK_EVENTS = {
    EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
    EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
}


def lookup_tool(calls: list[str], activity: ActivityOptions | None = None) -> Any:
    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        calls.append(data["q"])
        return {"found": data["q"].upper()}

    return create_tool(
        id="lookup",
        description="Looks something up",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        execute=execute,
        activity=activity,
    )


def worker_agent(agent_id: str, answer: str, calls: list[str], activity: ActivityOptions | None = None) -> Agent:
    """A sub-agent that looks one thing up, then answers."""
    return scripted_agent(
        agent_id,
        [ScriptedToolCall("lookup", {"q": agent_id}, id="look")],
        answer,
        description=f"The {agent_id}",
        tools={"lookup": lookup_tool(calls, activity)},
    )


async def test_two_sub_agents_in_parallel_run_as_children_and_answer_the_model(make_app: AppFactory) -> None:
    calls: list[str] = []
    researcher = worker_agent("researcher", "Research says 42.", calls)
    writer = worker_agent("writer", "Draft written.", calls)
    parent = scripted_agent(
        "lead",
        [delegate("researcher", "find the answer", "r1"), delegate("writer", "write it up", "w1")],
        "All done.",
        agents={"researcher": researcher, "writer": writer},
    )
    parent_model = cast(ScriptedModel, parent.model)
    app = make_app([parent])
    async with running_worker(app):
        result = await app.agent("lead").generate("go")
        assert result.text == "All done."
        assert result.finish_reason == "stop"

        results = {c.payload.tool_name: c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk)}
        assert results["agent-researcher"]["text"] == "Research says 42."
        assert results["agent-writer"]["text"] == "Draft written."
        assert results["agent-researcher"]["subAgentToolResults"][0]["result"] == {"found": "RESEARCHER"}
        # the model reads each sub-agent's text
        second_request = parent_model.requests[1]
        tool_texts = [part.result for message in second_request.messages for part in message.tool_results]
        assert sorted(tool_texts) == ["Draft written.", "Research says 42."]

        # the child's chunks appear in the parent's stream as tool-output chunks of the call, each once
        nested = [c for c in result.chunks if isinstance(c, ToolOutputChunk) and c.payload.tool_call_id == "r1"]
        nested_types = [c.payload.output["type"] for c in nested]
        assert nested_types[0] == "start" and nested_types[-1] == "finish"
        assert nested_types.count("tool-result") == 1
        nested_text = "".join(
            c.payload.output["payload"]["text"] for c in nested if c.payload.output["type"] == "text-delta"
        )
        assert nested_text == "Research says 42."
        links = [c for c in result.chunks if isinstance(c, DataChunk) and c.type == "data-child-run"]
        child_ids = {link.data["toolName"]: link.data["childRunId"] for link in links}  # type: ignore[attr-defined]
        assert set(child_ids) == {"agent-researcher", "agent-writer"}
        assert sorted(calls) == ["researcher", "writer"]

        # each child is a workflow of its own, a child of the parent
        parent_history = await closed_history(app.client, result.run_id)
        for child_id in child_ids.values():
            description = await app.client.get_workflow_handle(child_id).describe()
            assert description.parent_id == result.run_id
            child_history = await closed_history(app.client, child_id)
            print(f"child {child_id}: {len(child_history.events)} events")
            attached = await app.attach(child_id).result()
            assert attached.text in ("Research says 42.", "Draft written.")
        print(f"parent {result.run_id}: {len(parent_history.events)} events")
        assert len(parent_history.events) < 80  # a handful of events per child call, none per child step


async def test_a_failing_sub_agent_is_a_tool_error_with_the_reference_text(make_app: AppFactory) -> None:
    failing = Agent(
        id="failing",
        model=ScriptedModel(lambda request: (_ for _ in ()).throw(RuntimeError("model down"))),
    )
    parent = scripted_agent(
        "boss", [delegate("helper", "help", "h1")], "Handled.", name="Boss", agents={"helper": failing}
    )
    app = make_app([parent])
    async with running_worker(app):
        result = await app.agent("boss").generate("go")
        errors = [c for c in result.chunks if isinstance(c, ToolErrorChunk)]
        assert [e.payload.error for e in errors] == ["[Agent:Boss] - Failed agent tool execution for helper"]
        assert result.text == "Handled."


async def test_a_suspension_two_levels_down_is_answered_through_the_top_run(make_app: AppFactory) -> None:
    seen: list[Any] = []
    clerk = clerk_agent(seen)
    manager = scripted_agent(
        "manager",
        [delegate("clerk", "pay it", "c1")],
        "The clerk paid.",
        description="Delegates payments",
        agents={"clerk": clerk},
    )
    calls: list[str] = []
    lead = scripted_agent(
        "lead2",
        [delegate("manager", "get it paid", "m1"), delegate("researcher", "look", "r1")],
        "Finished.",
        agents={"manager": manager, "researcher": worker_agent("researcher2", "Looked.", calls)},
    )
    app = make_app([lead])
    async with running_worker(app):
        first = await app.agent("lead2").generate("start")
        assert first.finish_reason == "suspended"
        assert first.suspend_payload is not None
        assert first.suspend_payload["toolName"] == "agent-manager"
        assert first.suspend_payload["suspendPayload"] == {"question": "pay 12?"}
        pending = await app.pending(first.run_id, settle_seconds=60)
        assert [(p.tool_call_id, p.tool_name) for p in pending] == [("m1", "agent-manager")]
        for _ in range(600):  # visibility is eventually consistent (seconds on a loaded machine)
            suspended_runs = await app.list_suspended_runs()  # the top run only: its children wait with it
            if suspended_runs.runs:
                break
            await asyncio.sleep(0.05)
        child_waits = f"WorkflowId = '{first.run_id}-m1-c1' AND TempoAgentStatus = 'suspended'"
        for _ in range(600):  # the grandchild waits too, as visibility shows; it is not listed
            if [execution async for execution in app.client.list_workflows(child_waits)]:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the grandchild never showed as suspended in visibility")
        suspended_runs = await app.list_suspended_runs()
        assert [(run.run_id, [c.tool_name for c in run.tool_calls]) for run in suspended_runs.runs] == [
            (first.run_id, ["agent-manager"])
        ]

        resumed = await app.agent("lead2").resume_generate({"ok": True}, run_id=first.run_id)
        assert seen == [{"ok": True}]
        assert resumed.finish_reason == "stop"
        assert resumed.text == "Finished."
        assert (await app.list_suspended_runs()).runs == []  # nothing waits, at once
        assert (await app.store.waiting_runs(app.task_queue)).runs == []
        results = {c.payload.tool_name: c.payload.result for c in resumed.chunks if isinstance(c, ToolResultChunk)}
        assert results["agent-manager"]["text"] == "The clerk paid."
        whole = await app.attach(first.run_id, follow="run").result()
        all_results = [c.payload.tool_name for c in whole.chunks if isinstance(c, ToolResultChunk)]
        assert sorted(all_results) == ["agent-manager", "agent-researcher"]  # each once across both segments
        assert calls == ["researcher2"]


async def test_an_approval_inside_a_sub_agent_is_asked_by_the_parent(make_app: AppFactory) -> None:
    calls: list[str] = []
    careful = scripted_agent(
        "careful",
        [ScriptedToolCall("lookup", {"q": "secret"}, id="l1")],
        "Checked.",
        tools={"lookup": lookup_tool(calls)},
        default_options={"require_tool_approval": True},
    )
    parent = scripted_agent("asker", [delegate("careful", "check", "k1")], "Ok.", agents={"careful": careful})
    app = make_app([parent])
    async with running_worker(app):
        first = await app.agent("asker").generate("go")
        assert first.finish_reason == "suspended"
        pending = await app.pending(first.run_id, settle_seconds=60)
        assert [(p.tool_name, p.requires_approval) for p in pending] == [("agent-careful", True)]
        assert calls == []
        after = await (await app.agent("asker").approve_tool_call(run_id=first.run_id)).result()
        assert calls == ["secret"]
        assert after.text == "Ok."

        second = await app.agent("asker").generate("again")
        assert second.finish_reason == "suspended"
        declined = await app.agent("asker").decline_tool_call_generate(run_id=second.run_id, reason="not today")
        assert calls == ["secret"]  # declined in the child: its tool did not run
        child = await app.attach(f"{second.run_id}-k1", follow="run").result()
        denied = [c for c in child.chunks if isinstance(c, ToolOutputDeniedChunk)]
        assert [d.payload.tool_name for d in denied] == ["lookup"]
        assert declined.text == "Ok."


def echo_agent(agent_id: str, answer: str, **kwargs: Any) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([ScriptedResponse(text=answer)])
    return Agent(id=agent_id, instructions="You echo.", model=model, **kwargs), model


async def test_delegation_hooks_reject_or_see_the_result(make_app: AppFactory) -> None:
    starts: list[DelegationStart] = []
    completions: list[DelegationComplete] = []

    def on_start(start: DelegationStart) -> Any:
        starts.append(start)
        if start.prompt == "forbidden":
            return {"proceed": False, "reason": "not allowed today"}
        if start.prompt == "quietly forbidden":
            return {"proceed": False}
        return None

    def on_complete(done: DelegationComplete) -> Any:
        completions.append(done)
        return {"feedback": "Checked by the lead."}

    helper, helper_model = echo_agent("echo", "Echoed.")
    parent = scripted_agent(
        "gate",
        [delegate("echo", "forbidden", "a"), delegate("echo", "quietly forbidden", "b"), delegate("echo", "fine", "c")],
        "Over.",
        agents={"echo": helper},
        delegation=DelegationHooks(on_delegation_start=on_start, on_delegation_complete=on_complete),
    )
    parent_model = cast(ScriptedModel, parent.model)
    app = make_app([parent])
    async with running_worker(app):
        result = await app.agent("gate").generate("go")
        results = {c.payload.tool_call_id: c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk)}
        assert results["a"] == "[Delegation Rejected] not allowed today"
        assert results["b"] == "[Delegation Rejected] Delegation rejected by onDelegationStart hook"
        assert results["c"]["text"] == "Echoed."
        assert len(helper_model.requests) == 1  # only the accepted call ran the sub-agent
        assert sorted(s.prompt for s in starts) == ["fine", "forbidden", "quietly forbidden"]
        assert [(c.agent_key, c.result["text"] if c.result else None) for c in completions] == [("echo", "Echoed.")]
        seen = {
            part.tool_call_id: part.result
            for message in parent_model.requests[1].messages
            for part in message.tool_results
        }
        assert seen["c"] == "Echoed.\n\nChecked by the lead."


async def test_instructions_are_appended_max_steps_capped_and_memory_threads_derived(make_app: AppFactory) -> None:
    helper, helper_model = echo_agent("notes", "Noted.", default_options={"max_steps": 4})
    parent = scripted_agent(
        "memo",
        [delegate("notes", "note this", "n1", instructions="Be brief.", maxSteps=9)],
        "Saved.",
        agents={"notes": helper},
    )
    app = make_app([parent])
    async with running_worker(app):
        result = await app.agent("memo").generate("go", memory={"thread": "t1", "resource": "u1"})
        output = next(c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk))
        child_id = f"{result.run_id}-n1"
        assert output["subAgentThreadId"] == f"t1-{child_id}"
        assert output["subAgentResourceId"] == "u1-notes"
        system = helper_model.requests[0].messages[0]
        assert system.role == "system" and system.text == "You echo.\n\nBe brief."
        child_input = await app.client.get_workflow_handle(child_id).fetch_history()
        started = child_input.events[0].workflow_execution_started_event_attributes
        assert b'"maxSteps":4' in started.input.payloads[0].data
        thread = await app.store.get_thread_messages(f"t1-{child_id}", "u1-notes")
        assert [m["role"] for m in thread][:2] == ["user", "assistant"]


async def test_cancelling_the_parent_cancels_the_running_child(make_app: AppFactory) -> None:
    started = asyncio.Event()
    cancelled: list[bool] = []

    async def slow(data: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(ctx.cancelled.is_set())
            raise
        return "never"

    sleeper = scripted_agent(
        "sleeper",
        [ScriptedToolCall("slow", {}, id="s")],
        "x",
        tools={"slow": create_tool(id="slow", description="Sleeps", execute=slow)},
    )
    parent = scripted_agent("canceller", [delegate("sleeper", "sleep", "z")], "y", agents={"sleeper": sleeper})
    app = make_app([parent])
    async with running_worker(app):
        stream = await app.agent("canceller").stream("go")
        await asyncio.wait_for(started.wait(), 30)
        await app.cancel_run(stream.run_id)
        result = await asyncio.wait_for(stream.result(), 30)
        assert result.finish_reason == "aborted"
        child = app.client.get_workflow_handle(f"{stream.run_id}-z")
        with pytest.raises(WorkflowFailureError):
            await asyncio.wait_for(child.result(), 30)
        assert (await child.describe()).status == WorkflowExecutionStatus.CANCELED
        parent_status = (await app.client.get_workflow_handle(stream.run_id).describe()).status
        assert parent_status == WorkflowExecutionStatus.CANCELED
        child_result = await app.attach(child.id).result()
        assert child_result.finish_reason == "aborted"
    assert cancelled == [True]


async def test_a_retried_step_inside_the_child_is_dropped_from_the_parents_nested_view(make_app: AppFactory) -> None:
    flaky_model = FlakyModel([ScriptedResponse(text="Hello there friend")])
    flaky = Agent(id="flaky-child", model=flaky_model)
    parent = scripted_agent("patient", [delegate("flaky", "hi", "f")], "Heard it.", agents={"flaky": flaky})
    app = make_app([parent])
    async with running_worker(app):
        result = await app.agent("patient").generate("go")
    assert flaky_model.attempts[0] == 2
    nested = [c.payload.output for c in result.chunks if isinstance(c, ToolOutputChunk)]
    assert "step-reset" in [n["type"] for n in nested]
    text = "".join(n["payload"]["text"] for n in nested if n["type"] == "text-delta")
    assert text == "Hello there friend"  # the failed attempt's first word is gone, once
    assert next(c for c in result.chunks if isinstance(c, ToolResultChunk)).payload.result["text"] == text


async def test_a_child_answered_directly_carries_its_parent_on(make_app: AppFactory) -> None:
    seen: list[Any] = []
    lead = scripted_agent("lead3", [delegate("clerk", "pay", "k")], "Done here.", agents={"clerk": clerk_agent(seen)})
    app = make_app([lead])
    async with running_worker(app):
        first = await app.agent("lead3").generate("go")
        child_id = f"{first.run_id}-k"
        assert [p.tool_name for p in await app.pending(child_id, settle_seconds=60)] == ["confirm"]
        await app.agent("clerk").resume_generate({"ok": True}, run_id=child_id)
        await app.client.get_workflow_handle(first.run_id).result()  # the parent goes on without being answered
        whole = await app.attach(first.run_id, follow="run").result()
        assert seen == [{"ok": True}]
        result = next(c for c in whole.chunks if isinstance(c, ToolResultChunk))
        assert result.payload.result["text"] == "Paid 12."
        assert whole.text == "Done here."
        assert whole.finish_reason == "stop"


def work_events(events: Any) -> int:
    """Events other than workflow tasks (how many tasks a run takes depends on timing, not on what it does)."""
    return sum(1 for event in events if event.event_type not in WORKFLOW_TASK_EVENTS)


async def test_the_parents_history_does_not_grow_with_the_childs_steps(make_app: AppFactory) -> None:
    def busy_agent(agent_id: str, steps: int) -> Agent:
        script = [
            ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"q": f"q{n}"}, id=f"l{n}")]) for n in range(steps)
        ]
        return Agent(
            id=agent_id,
            model=ScriptedModel([*script, ScriptedResponse(text="Looked everything up.")]),
            tools={"lookup": lookup_tool([])},
            default_options={"max_steps": steps + 1},
        )

    def parent(agent_id: str, child: Agent) -> Agent:
        return scripted_agent(agent_id, [delegate("busy", "work", "b")], "Ok.", agents={"busy": child})

    app = make_app(
        [parent("short-parent", busy_agent("short-child", 1)), parent("long-parent", busy_agent("long-child", 8))]
    )
    lengths: dict[str, tuple[int, int]] = {}
    work: dict[str, tuple[int, int]] = {}
    async with running_worker(app):
        for agent_id in ("short-parent", "long-parent"):
            result = await app.agent(agent_id).generate("go")
            assert result.text == "Ok."
            parent_events = (await closed_history(app.client, result.run_id)).events
            child_events = (await closed_history(app.client, f"{result.run_id}-b")).events
            lengths[agent_id] = (len(parent_events), len(child_events))
            work[agent_id] = (work_events(parent_events), work_events(child_events))
    print(f"(parent events, child events): one child step {lengths['short-parent']}, eight {lengths['long-parent']}")
    print(f"without workflow-task events: one child step {work['short-parent']}, eight {work['long-parent']}")
    assert work["long-parent"][1] > work["short-parent"][1] + 30  # the child's history grows with its steps
    assert work["long-parent"][0] == work["short-parent"][0]  # the parent's does not


async def test_the_cli_prints_a_sub_agents_text_as_one_line_under_its_call(make_app: AppFactory) -> None:
    parent = scripted_agent(
        "printed",
        [delegate("researcher", "look", "p1")],
        "Printed.",
        agents={"researcher": worker_agent("researcher3", "Research says 42.", [])},
    )
    app = make_app([parent])
    async with running_worker(app):
        result = await app.agent("printed").generate("go")
    out = io.StringIO()
    printer = ChunkPrinter(out)
    for chunk in result.chunks:
        printer.write(chunk)
    printer.close()
    lines = out.getvalue().splitlines()
    assert "  sub-text     agent-researcher ▸ Research says 42." in lines
    assert any(line.startswith("  sub-tool-call agent-researcher ▸ ") and '"lookup"' in line for line in lines)
    assert any(line.startswith("  tool-result  agent-researcher ") for line in lines)
    assert len([line for line in lines if "agent-researcher ▸" in line]) <= 6


async def test_the_sub_agents_tool_errors_are_listed_with_its_results(make_app: AppFactory) -> None:
    def broken(data: dict[str, Any], ctx: ToolContext) -> Any:
        raise RuntimeError("disk on fire")

    clumsy = scripted_agent(
        "clumsy",
        [ScriptedToolCall("lookup", {"q": "a"}, id="ok"), ScriptedToolCall("broken", {}, id="bad")],
        "Half done.",
        tools={"lookup": lookup_tool([]), "broken": create_tool(id="broken", description="Fails", execute=broken)},
    )
    parent = scripted_agent("supervisor", [delegate("clumsy", "try", "c")], "Noted.", agents={"clumsy": clumsy})
    app = make_app([parent])
    async with running_worker(app):
        result = await app.agent("supervisor").generate("go")
    output = next(c for c in result.chunks if isinstance(c, ToolResultChunk)).payload.result
    assert output["text"] == "Half done."
    by_call = {r["toolCallId"]: r for r in output["subAgentToolResults"]}
    assert by_call["ok"]["result"] == {"found": "A"} and "isError" not in by_call["ok"]
    assert by_call["bad"] == {
        "toolName": "broken",
        "toolCallId": "bad",
        "result": "disk on fire",
        "args": {},
        "isError": True,
    }


async def test_a_deadline_inside_the_sub_agent_carries_the_parent_on(make_app: AppFactory) -> None:
    async def ask(data: dict[str, Any], ctx: ToolContext) -> Any:
        if ctx.expired:
            return "nobody answered"
        assert ctx.suspend is not None
        return await ctx.suspend({"question": "anyone?"})

    waiting = scripted_agent(
        "patient-child",
        [ScriptedToolCall("ask", {}, id="q")],
        "Gave up waiting.",
        tools={"ask": create_tool(id="ask", description="Asks", execute=ask, suspend_expires_in=timedelta(seconds=1))},
    )
    parent = scripted_agent("deadline-parent", [delegate("asker", "ask", "a")], "Moved on.", agents={"asker": waiting})
    app = make_app([parent])
    async with running_worker(app):
        first = await app.agent("deadline-parent").generate("go")
        assert first.finish_reason == "suspended"
        await asyncio.wait_for(app.client.get_workflow_handle(first.run_id).result(), 60)
        whole = await app.attach(first.run_id, follow="run").result()
    result = next(c for c in whole.chunks if isinstance(c, ToolResultChunk))
    assert result.payload.result["text"] == "Gave up waiting."
    assert whole.text == "Moved on."


async def test_a_sub_agent_with_local_tools_gets_the_short_workflow_task_timeout(make_app: AppFactory) -> None:
    """A sub-agent's run is started as any run of that agent: with a local tool, the 4 s workflow task timeout that
    lets a lost worker be noticed quickly; the parent, without local activities, keeps Temporal's 10 s."""
    calls: list[str] = []
    quick = worker_agent("quick", "Quick answer.", calls, ActivityOptions(local=True))
    parent = scripted_agent("lead", [delegate("quick", "be quick", "q1")], "Done.", agents={"quick": quick})
    app = make_app([parent])
    async with running_worker(app):
        result = await app.agent("lead").generate("go")
        assert result.text == "Done." and calls == ["quick"]
        [link] = [c for c in result.chunks if isinstance(c, DataChunk) and c.type == "data-child-run"]
        child_history = await closed_history(app.client, link.data["childRunId"])  # type: ignore[attr-defined]
        parent_history = await closed_history(app.client, result.run_id)
    child_started = child_history.events[0].workflow_execution_started_event_attributes
    assert child_started.workflow_task_timeout.ToSeconds() == LOCAL_TASK_TIMEOUT.total_seconds()
    parent_started = parent_history.events[0].workflow_execution_started_event_attributes
    assert parent_started.workflow_task_timeout.ToSeconds() == 10
