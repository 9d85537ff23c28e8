"""Finding agents, their tool files and their sub-agents in a directory: the file system only, no imports.

An agent is a directory under ``agents/`` holding ``config.py`` or ``instructions.md`` (others are ignored);
entries are taken in sorted order and symbolic links are skipped, so what a directory holds decides, not what it
points to. Worker and client both run this on the same directory and so find the same agents and tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tempo_agents.file_agents.messages import MAX_SUBAGENT_DEPTH

__all__ = [
    "CONFIG_FILE",
    "INSTRUCTIONS_FILE",
    "SUBAGENTS_DIR",
    "TOOLS_DIR",
    "AgentEntry",
    "ToolFile",
    "discover_agents",
    "discover_tools",
]

CONFIG_FILE = "config.py"
INSTRUCTIONS_FILE = "instructions.md"
TOOLS_DIR = "tools"
SUBAGENTS_DIR = "subagents"


@dataclass(frozen=True)
class ToolFile:
    """A module of a ``tools/`` folder: its key (the file's stem) is the tool's model-visible name."""

    key: str
    path: Path


@dataclass(frozen=True)
class AgentEntry:
    """One agent directory as found on disk."""

    name: str
    """The directory's name: the agent's id and name unless its config says otherwise."""
    path: Path
    relative: str
    """The directory relative to the app directory (``agents/shop/subagents/researcher``), for messages."""
    config_file: Path | None
    instructions_file: Path | None
    tool_files: tuple[ToolFile, ...]
    subagents: tuple[AgentEntry, ...]
    depth: int
    """0 for a top-level agent, 1 for its sub-agents, and so on."""
    subagents_ignored: bool
    """It has sub-agents of its own, deeper than :data:`MAX_SUBAGENT_DEPTH` allows."""


def discover_agents(app_dir: Path) -> list[AgentEntry]:
    """The agents under ``app_dir/agents/``, sorted by directory name."""
    return _agents_in(app_dir / "agents", "agents", depth=0)


def _agents_in(folder: Path, relative: str, depth: int) -> list[AgentEntry]:
    entries = []
    for child in _sorted_entries(folder):
        if not _is_real_dir(child):
            continue
        config_file = _real_file(child / CONFIG_FILE)
        instructions_file = _real_file(child / INSTRUCTIONS_FILE)
        if config_file is None and instructions_file is None:
            continue
        child_relative = f"{relative}/{child.name}"
        subagents_dir = child / SUBAGENTS_DIR
        nested: list[AgentEntry] = []
        ignored = False
        if _is_real_dir(subagents_dir):
            found = _agents_in(subagents_dir, f"{child_relative}/{SUBAGENTS_DIR}", depth + 1)
            if depth + 1 > MAX_SUBAGENT_DEPTH:
                ignored = bool(found)
            else:
                nested = found
        entries.append(
            AgentEntry(
                name=child.name,
                path=child,
                relative=child_relative,
                config_file=config_file,
                instructions_file=instructions_file,
                tool_files=tuple(discover_tools(child / TOOLS_DIR)),
                subagents=tuple(nested),
                depth=depth,
                subagents_ignored=ignored,
            )
        )
    return entries


def discover_tools(tools_dir: Path) -> list[ToolFile]:
    """The tool modules of a ``tools/`` folder, in sorted order (none when it is missing or unreadable).

    Skipped: anything but a regular ``.py`` file (folders are not searched), symbolic links, tests
    (``test_*.py``, ``*_test.py``) and private modules (``_*.py``, so ``__init__.py`` too).
    """
    if not _is_real_dir(tools_dir):
        return []
    found = []
    for entry in _sorted_entries(tools_dir):
        name = entry.name
        if not name.endswith(".py") or name.startswith("_") or name.startswith("test_") or name.endswith("_test.py"):
            continue
        if _real_file(entry) is None:
            continue
        found.append(ToolFile(key=name.removesuffix(".py"), path=entry))
    return found


def _sorted_entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir(), key=lambda path: path.name)
    except OSError:
        return []


def _is_real_dir(path: Path) -> bool:
    return not path.is_symlink() and path.is_dir()


def _real_file(path: Path) -> Path | None:
    return path if not path.is_symlink() and path.is_file() else None
