"""The tools an agent's sub-agents and workflows become, in the merge order of the tool names."""

from __future__ import annotations

from collections.abc import Mapping

from tempo_agents.agent.child_tool import ChildTool
from tempo_agents.agent.delegation import DelegatedAgent, DelegatingAgent, sub_agent_tool
from tempo_agents.agent.workflow_tools import WorkflowTool, workflow_tool
from tempo_agents.tools.tool import Tool


def child_tools(
    parent: DelegatingAgent, agents: Mapping[str, DelegatedAgent], workflows: Mapping[str, WorkflowTool]
) -> dict[str, Tool]:
    """``agent-<key>`` for every sub-agent, then ``workflow-<key>`` for every workflow (later keys win)."""
    tools: dict[str, Tool] = {}
    for key, sub_agent in agents.items():
        tools[f"agent-{key}"] = sub_agent_tool(key, sub_agent, parent)
    for key, spec in workflows.items():
        tools[f"workflow-{key}"] = workflow_tool(key, spec)
    return tools


def is_child_tool(tool: Tool) -> bool:
    """Whether calls of this tool run as child workflows."""
    return isinstance(tool, ChildTool)
