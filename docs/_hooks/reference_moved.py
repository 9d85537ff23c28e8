"""The table of moved modules and names on the versioning page, from the table the old paths are answered by."""

from __future__ import annotations

from tempo_agents.deprecations import MOVED_MODULES, MOVED_NAMES

__all__ = ["MARKER", "moved_table"]

MARKER = "<!-- moved-table -->"
"""Where the versioning page's source wants the table."""


def moved_table() -> str:
    """The Markdown table of every old path and its new one."""
    rows = ["| old path | new path |", "| --- | --- |"]
    rows += [f"| `{old}` | `{new}` |" for old, new in sorted(MOVED_MODULES.items())]
    rows += [
        f"| `{module}.{name}` | `{new_module}.{new_name}` |"
        for (module, name), (new_module, new_name) in sorted(MOVED_NAMES.items())
    ]
    return "\n".join(rows) + "\n"
