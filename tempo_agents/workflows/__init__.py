"""The agent-run workflow and the data it exchanges with activities. Nothing here does I/O."""

from tempo_agents.workflows.agent_run import AgentRunWorkflow

__all__ = ["AgentRunWorkflow"]
