"""Tools: typed, validated units of work an agent can call."""

from tempo_agents.tools.builtin.ask_user import ask_user_tool
from tempo_agents.tools.builtin.submit_plan import create_submit_plan_tool, submit_plan_tool
from tempo_agents.tools.builtin.task_tools import task_check_tool, task_complete_tool, task_update_tool, task_write_tool
from tempo_agents.tools.builtin.web_fetch import create_web_fetch_tool, web_fetch_tool
from tempo_agents.tools.builtin.web_search import web_search_tool
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
    "create_web_fetch_tool",
    "submit_plan_tool",
    "task_check_tool",
    "task_complete_tool",
    "task_update_tool",
    "task_write_tool",
    "web_fetch_tool",
    "web_search_tool",
]
