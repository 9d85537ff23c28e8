"""File-based agents: an app directory whose ``agents/<name>/`` folders (``config.py``, ``instructions.md``,
``tools/*.py``, ``subagents/<name>/``) are the agents, found the same way by workers and clients."""

from tempo_agents.file_agents.agent_config import AgentConfig, agent_config
from tempo_agents.file_agents.assembly import FileAgentError, WarnFunction, load_agents

__all__ = ["AgentConfig", "FileAgentError", "WarnFunction", "agent_config", "load_agents"]
