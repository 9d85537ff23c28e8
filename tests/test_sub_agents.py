"""Sub-agents as tools (reference §5.1): each call of ``agent-<key>`` runs the sub-agent as a child workflow."""

from __future__ import annotations

from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.journal.chunks import DataChunk, ToolErrorChunk, ToolOutputChunk, ToolResultChunk
from tests.conftest import AppFactory, closed_history, running_worker


def lookup_tool(calls: list[str]) -> Any:
    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        calls.append(data["q"])
        return {"found": data["q"].upper()}

    return create_tool(
        id="lookup",
        description="Looks something up",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        execute=execute,
    )


def worker_agent(agent_id: str, answer: str, calls: list[str]) -> Agent:
    """A sub-agent that looks one thing up, then answers."""
    return Agent(
        id=agent_id,
        description=f"The {agent_id}",
        model=ScriptedModel(
            [
                ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"q": agent_id}, id="look")]),
                ScriptedResponse(text=answer),
            ]
        ),
        tools={"lookup": lookup_tool(calls)},
    )


async def test_two_sub_agents_in_parallel_run_as_children_and_answer_the_model(make_app: AppFactory) -> None:
    calls: list[str] = []
    researcher = worker_agent("researcher", "Research says 42.", calls)
    writer = worker_agent("writer", "Draft written.", calls)
    parent_model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall("agent-researcher", {"prompt": "find the answer"}, id="r1"),
                    ScriptedToolCall("agent-writer", {"prompt": "write it up"}, id="w1"),
                ]
            ),
            ScriptedResponse(text="All done."),
        ]
    )
    parent = Agent(id="lead", model=parent_model, agents={"researcher": researcher, "writer": writer})
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
    def broken(data: dict[str, Any], ctx: ToolContext) -> Any:
        raise RuntimeError("boom")

    failing = Agent(
        id="failing",
        model=ScriptedModel(lambda request: (_ for _ in ()).throw(RuntimeError("model down"))),
    )
    parent = Agent(
        id="boss",
        name="Boss",
        model=ScriptedModel(
            [
                ScriptedResponse(tool_calls=[ScriptedToolCall("agent-helper", {"prompt": "help"}, id="h1")]),
                ScriptedResponse(text="Handled."),
            ]
        ),
        agents={"helper": failing},
    )
    app = make_app([parent])
    async with running_worker(app):
        result = await app.agent("boss").generate("go")
        errors = [c for c in result.chunks if isinstance(c, ToolErrorChunk)]
        assert [e.payload.error for e in errors] == ["[Agent:Boss] - Failed agent tool execution for helper"]
        assert result.text == "Handled."
