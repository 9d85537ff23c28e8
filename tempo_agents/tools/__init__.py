"""Tools: typed, validated units of work an agent can call."""

from tempo_agents.tools.builtin.ask_user import ask_user_tool
from tempo_agents.tools.builtin.submit_plan import create_submit_plan_tool, submit_plan_tool
from tempo_agents.tools.context import DetachedWriter, ToolContext, ToolWriter
from tempo_agents.tools.lifecycle import ToolLifecycleEvent
from tempo_agents.tools.tool import Tool, create_tool

__all__ = [
    "DetachedWriter",
    "Tool",
    "ToolContext",
    "ToolLifecycleEvent",
    "ToolWriter",
    "ask_user_tool",
    "create_submit_plan_tool",
    "create_tool",
    "submit_plan_tool",
]
