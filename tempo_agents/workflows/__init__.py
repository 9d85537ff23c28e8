"""The agent-run workflow and the data it exchanges with activities. Nothing here does I/O."""

from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.tool_suspension import wait_for_resume

__all__ = ["AgentRunWorkflow", "wait_for_resume"]
