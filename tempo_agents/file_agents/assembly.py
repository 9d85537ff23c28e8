"""Building the agents of an app directory: imports its files, merges them with each ``config.py`` and reports
what the merge decided (warnings) or cannot decide (errors)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tempo_agents.agent.agent import Agent, Instructions
from tempo_agents.errors import ConfigurationError
from tempo_agents.file_agents import messages
from tempo_agents.file_agents.discovery import AgentEntry, ToolFile, discover_agents
from tempo_agents.file_agents.modules import import_file
from tempo_agents.models.model import Model
from tempo_agents.tools.tool import Tool

__all__ = ["FileAgentError", "WarnFunction", "load_agents"]

WarnFunction = Callable[[str], None]
"""Receives each warning's text; by default they are logged (logger ``tempo_agents.file_agents``, level WARNING)."""

log = logging.getLogger("tempo_agents.file_agents")


class FileAgentError(ConfigurationError):
    """An app directory cannot be turned into agents; ``code`` names the reason (``AGENT_FS_ROUTING_...``)."""

    code = "AGENT_FS_ROUTING_ERROR"


def load_agents(
    app_dir: str | os.PathLike[str], *, default_model: Model | str | None = None, on_warn: WarnFunction | None = None
) -> list[Agent]:
    """The agents of ``app_dir/agents/``, sorted by directory name, each with its tools and sub-agents."""
    root = Path(app_dir)
    agents_dir = root / "agents"
    if agents_dir.is_symlink() or not agents_dir.is_dir():
        raise FileAgentError(messages.no_agents_folder(os.fspath(app_dir)))
    build = _Builder(root, default_model, on_warn or log.warning)
    return [build.agent(entry) for entry in discover_agents(root)]


@dataclass
class _Builder:
    app_dir: Path
    default_model: Model | str | None
    warn: WarnFunction

    def agent(self, entry: AgentEntry) -> Agent:
        name = entry.name
        config = self._config(entry)
        if isinstance(config, Agent):
            self._warn_ignored(entry)
            return config
        if entry.subagents_ignored:
            self.warn(messages.subagents_too_deep(name))

        discovered_tools = {tool_file.key: self._tool(entry, tool_file) for tool_file in entry.tool_files}
        config_tools = dict(config.pop("tools", None) or {})
        for key in discovered_tools:
            if key in config_tools:
                self.warn(messages.tool_defined_twice(name, key))
        tools = {**discovered_tools, **config_tools}

        discovered_agents = {child.name: self._subagent(entry, child) for child in entry.subagents}
        config_agents = dict(config.pop("agents", None) or {})
        for child_id in discovered_agents:
            if child_id in config_agents:
                self.warn(messages.subagent_defined_twice(name, child_id))
            elif child_id in tools:
                raise FileAgentError(
                    messages.subagent_collides_with_tool(name, child_id),
                    code="AGENT_FS_ROUTING_SUBAGENT_NAME_COLLISION",
                )

        model = config.pop("model", None) or self.default_model
        if model is None:
            raise FileAgentError(messages.model_required(name), code="AGENT_FS_ROUTING_MODEL_REQUIRED")
        instructions = self._instructions(entry, config.pop("instructions", None))
        config.setdefault("id", name)
        config.setdefault("name", name)
        try:
            return Agent(
                model=model,
                instructions=instructions,
                tools=tools,
                agents={**discovered_agents, **config_agents},
                **config,
            )
        except TypeError as error:
            raise FileAgentError(f'Agent "{name}": {entry.relative}/config.py: {error}') from None

    def _subagent(self, parent: AgentEntry, child: AgentEntry) -> Agent:
        agent = self.agent(child)
        if not agent.description.strip():
            raise FileAgentError(
                messages.subagent_description_required(parent.name, child.name),
                code="AGENT_FS_ROUTING_SUBAGENT_DESCRIPTION_REQUIRED",
            )
        return agent

    def _warn_ignored(self, entry: AgentEntry) -> None:
        if entry.tool_files:
            self.warn(messages.agent_ignores_tools(entry.name))
        if entry.instructions_file is not None:
            self.warn(messages.agent_ignores_instructions(entry.name))
        if entry.subagents or entry.subagents_ignored:
            self.warn(messages.agent_ignores_subagents(entry.name))

    def _config(self, entry: AgentEntry) -> Agent | dict[str, Any]:
        if entry.config_file is None:
            return {}
        module = import_file(entry.config_file, self.app_dir)
        value = getattr(module, "config", None)
        if isinstance(value, Agent):
            return value
        if isinstance(value, Mapping):
            return dict(value)
        found = "it does not set it" if value is None else f"it is a {type(value).__name__}"
        raise FileAgentError(messages.no_config_in_file(entry.name, f"{entry.relative}/config.py", found))

    def _instructions(self, entry: AgentEntry, configured: Instructions | None) -> Instructions:
        markdown = entry.instructions_file.read_text(encoding="utf-8").strip() if entry.instructions_file else ""
        if callable(configured):
            if markdown:
                self.warn(messages.instructions_function_wins(entry.name))
            return configured
        if markdown:
            return markdown
        if isinstance(configured, str) and configured.strip():
            return configured
        raise FileAgentError(messages.instructions_required(entry.name), code="AGENT_FS_ROUTING_INSTRUCTIONS_REQUIRED")

    def _tool(self, entry: AgentEntry, tool_file: ToolFile) -> Tool:
        module = import_file(tool_file.path, self.app_dir)
        shown = f"{entry.relative}/tools/{tool_file.path.name}"
        named = getattr(module, "tool", None)
        if isinstance(named, Tool):
            return named
        found: dict[int, tuple[str, Tool]] = {}
        for attribute, value in vars(module).items():
            if isinstance(value, Tool) and not attribute.startswith("_"):
                found.setdefault(id(value), (attribute, value))
        if not found:
            raise FileAgentError(messages.no_tool_in_file(entry.name, shown), code="AGENT_FS_ROUTING_TOOL_REQUIRED")
        if len(found) > 1:
            names = [attribute for attribute, _ in found.values()]
            raise FileAgentError(
                messages.several_tools_in_file(entry.name, shown, names), code="AGENT_FS_ROUTING_TOOL_AMBIGUOUS"
            )
        ((_, tool),) = found.values()
        return tool
