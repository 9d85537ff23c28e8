"""§5.1, §5.2 and §5.4: how sub-agents and workflows become tools (names, merge order, schemas, collisions)."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio import workflow

from tempo_agents import Agent, ScriptedModel, WorkflowTool, create_tool
from tempo_agents.activities.registry import Registry
from tempo_agents.errors import ConfigurationError, ToolNameCollisionError


@workflow.defn(name="Noop")
class NoopWorkflow:
    @workflow.run
    async def run(self, data: dict[str, Any]) -> dict[str, Any]:
        return data


def plain_tool(tool_id: str) -> Any:
    return create_tool(id=tool_id, description=f"tool {tool_id}", execute=lambda data: None)


def sub(agent_id: str, description: str = "") -> Agent:
    return Agent(id=agent_id, model=ScriptedModel([]), description=description)


def test_sub_agents_and_workflows_come_after_tools_keyed_by_their_object_key() -> None:
    agent = Agent(
        id="parent",
        model=ScriptedModel([]),
        tools={"search": plain_tool("search")},
        agents={"researcher": sub("research-agent-id", "Researches topics")},
        workflows={"findUser": NoopWorkflow},
    )
    assert list(agent.tools) == ["search", "agent-researcher", "workflow-findUser"]
    assert agent.tools["agent-researcher"].id == "agent-researcher"
    assert agent.tools["agent-researcher"].description == "Researches topics"
    assert agent.tools["workflow-findUser"].description == "Workflow: findUser"


def test_descriptions_fall_back_to_the_key() -> None:
    agent = Agent(id="p", model=ScriptedModel([]), agents={"helper": sub("h")}, workflows={"w": WorkflowTool(name="W")})
    assert agent.tools["agent-helper"].description == "Agent: helper"
    assert agent.tools["workflow-w"].description == "Workflow: w"


def test_the_sub_agent_tool_offers_the_reference_input_schema() -> None:
    agent = Agent(id="p", model=ScriptedModel([]), agents={"helper": sub("h")})
    schema = agent.tools["agent-helper"].model_input_schema()
    properties = schema["properties"]
    assert list(properties) == ["prompt", "threadId", "resourceId", "instructions", "maxSteps"]
    assert schema["required"] == ["prompt"]
    assert properties["prompt"]["description"] == "The prompt to send to the agent"
    assert properties["threadId"]["description"] == "Thread ID for conversation continuity for memory messages"
    assert properties["resourceId"]["description"] == "Resource/user identifier for memory messages"
    assert properties["instructions"]["description"] == (
        "Additional instructions to append to the agent instructions. Only provide if you have specific guidance "
        "beyond what the agent already knows. Leave empty in most cases."
    )
    assert properties["maxSteps"] == {
        "type": "number",
        "minimum": 3,
        "description": "Maximum number of execution steps for the sub-agent",
    }


def test_the_workflow_tool_wraps_the_input_schema_in_input_data() -> None:
    spec = WorkflowTool(name="X", input_schema={"type": "object", "properties": {"n": {"type": "number"}}})
    agent = Agent(id="p", model=ScriptedModel([]), workflows={"x": spec})
    assert agent.tools["workflow-x"].model_input_schema() == {
        "type": "object",
        "properties": {"inputData": {"type": "object", "properties": {"n": {"type": "number"}}}},
        "required": ["inputData"],
        "additionalProperties": True,
    }


def test_a_later_source_overrides_an_earlier_one_of_the_same_name() -> None:
    own = plain_tool("own")
    agent = Agent(
        id="p", model=ScriptedModel([]), tools={"agent-helper": own}, agents={"helper": sub("h", "The helper")}
    )
    assert agent.tools["agent-helper"].description == "The helper"


def test_names_that_sanitise_alike_collide_with_the_reference_text() -> None:
    with pytest.raises(ToolNameCollisionError) as raised:
        Agent(
            id="p",
            model=ScriptedModel([]),
            tools={"agent-deep_research": plain_tool("t")},
            agents={"deep research": sub("d")},
        )
    assert str(raised.value) == (
        'Two or more tools resolve to the same name "agent-deep_research". '
        "Please rename one of the tools to avoid this collision."
    )
    with pytest.raises(ToolNameCollisionError) as raised:
        Agent(
            id="p",
            model=ScriptedModel([]),
            workflows={"find user": WorkflowTool(name="A"), "find_user": WorkflowTool(name="B")},
        )
    assert str(raised.value) == (
        'Two or more tools resolve to the same name "workflow-find_user". '
        "Please rename one of the tools to avoid this collision."
    )


def test_a_workflow_that_is_not_a_workflow_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r'workflows\["bad"\] is a function'):
        Agent(id="p", model=ScriptedModel([]), workflows={"bad": lambda: None})


def test_sub_agents_are_registered_with_their_parent_and_child_tools_stay_with_it() -> None:
    leaf = sub("leaf", "The leaf")
    middle = Agent(id="middle", model=ScriptedModel([]), description="Middle", agents={"leaf": leaf})
    top = Agent(id="top", model=ScriptedModel([]), agents={"middle": middle}, workflows={"noop": NoopWorkflow})
    registry = Registry(agents=[top])
    assert [agent.id for agent in registry.agents] == ["top", "middle", "leaf"]
    assert registry.workflow_classes == [NoopWorkflow]
    assert "agent-middle" not in registry.tools and "workflow-noop" not in registry.tools  # they need the run


def test_two_sub_agents_with_one_id_are_refused() -> None:
    with pytest.raises(ConfigurationError, match='two agents share the id "twin"'):
        Registry(agents=[Agent(id="p", model=ScriptedModel([]), agents={"a": sub("twin"), "b": sub("twin")})])
