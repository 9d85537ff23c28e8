"""Model-visible tool names: sanitised keys and the collision rule."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar

from tempo_agents.errors import ToolNameCollisionError

__all__ = ["MAX_TOOL_NAME_LENGTH", "sanitize_tool_name", "sanitize_tool_names"]

_T = TypeVar("_T")
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
_VALID_START = re.compile(r"[a-zA-Z_]")
MAX_TOOL_NAME_LENGTH = 63


def sanitize_tool_name(key: str) -> str:
    """Characters outside ``[a-zA-Z0-9_-]`` become ``_``; a name not starting with a letter or ``_``
    gets a ``_`` prefix; the result is cut to 63 characters."""
    name = _INVALID.sub("_", key)
    if not name or not _VALID_START.match(name[0]):
        name = "_" + name
    return name[:MAX_TOOL_NAME_LENGTH]


def sanitize_tool_names(tools: Mapping[str, _T]) -> dict[str, _T]:
    """Key every tool by its model-visible name; two keys that sanitise alike raise."""
    named: dict[str, _T] = {}
    for key, tool in tools.items():
        name = sanitize_tool_name(key)
        if name in named:
            raise ToolNameCollisionError(
                f'Two or more tools resolve to the same name "{name}". '
                "Please rename one of the tools to avoid this collision."
            )
        named[name] = tool
    return named
