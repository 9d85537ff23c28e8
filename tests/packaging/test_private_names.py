"""A module's private names stay its own: no module of the package imports an underscored name of another.

When two modules need the same thing, it gets a public owner (as how a tool call ended did: ``CallRecord`` in
``activities/call_record.py``, which the tool-call and child-relay activities both use).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tempo_agents"


def _private_imports(source: str) -> list[str]:
    """``module.name`` of every underscored name imported from the package (dunder names are public)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tempo_agents"):
            found += [
                f"{node.module}.{alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
    return found


def test_the_check_finds_a_private_import() -> None:
    source = (
        "from tempo_agents.activities.tool_call import _Call, run_tool_call\nfrom tempo_agents import __version__\n"
    )
    assert _private_imports(source) == ["tempo_agents.activities.tool_call._Call"]


def test_no_module_imports_a_private_name_of_another() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100  # the package, not an empty folder
    found = {
        str(path.relative_to(PACKAGE)): imports
        for path in modules
        if (imports := _private_imports(path.read_text(encoding="utf-8")))
    }
    assert found == {}
