"""ChildTool: the kind of tool whose calls run as child workflows."""

from __future__ import annotations

from tempo_agents.tools.tool import Tool


class ChildTool(Tool):
    """An ``agent-<key>`` or ``workflow-<key>`` tool. Only an agent's run calls it (it starts a child workflow of
    that run), so it is not among the App's tools that can be run directly."""
