"""tempo-agents: typed tools and durable agent runs, every run a Temporal workflow."""

from tempo_agents.agent import Agent, AgentStream, App, GenerateResult, ToolCallHookContext, ToolHooks
from tempo_agents.agent.delegation import DelegationComplete, DelegationHooks, DelegationStart
from tempo_agents.agent.workflow_tools import WorkflowTool
from tempo_agents.models import ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage
from tempo_agents.tools import Tool, ToolContext, create_tool
from tempo_agents.worker import TempoAgentsPlugin
from tempo_agents.workflows.tool_suspension import wait_for_resume

__all__ = [
    "Agent",
    "AgentStream",
    "App",
    "DelegationComplete",
    "DelegationHooks",
    "DelegationStart",
    "GenerateResult",
    "ScriptedModel",
    "ScriptedResponse",
    "ScriptedToolCall",
    "TempoAgentsPlugin",
    "Tool",
    "ToolCallHookContext",
    "ToolContext",
    "ToolHooks",
    "Usage",
    "WorkflowTool",
    "create_tool",
    "wait_for_resume",
]
