"""Tools: typed, validated units of work an agent can call."""

from tempo_agents.tools.context import DetachedWriter, ToolContext, ToolWriter
from tempo_agents.tools.tool import Tool, create_tool

__all__ = ["DetachedWriter", "Tool", "ToolContext", "ToolWriter", "create_tool"]
