"""Activities: model steps, tool calls and the end of a run. All I/O and user code runs here."""

from tempo_agents.activities.agent_activities import AgentActivities

__all__ = ["AgentActivities"]
