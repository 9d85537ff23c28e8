"""Workflow code reaches other packages only through their public modules.

``workflows/`` runs on every replay of every run: what it imports is part of what must stay stable, so it may
use a package's public names (``tools.validation``, ``tasks``), never another package's private modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

WORKFLOWS = Path(__file__).parents[2] / "tempo_agents" / "workflows"
CORE_PRIVATE = {"tempo_agents._wire", "tempo_agents._json"}
"""Private modules of the package root, shared by all of it."""


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("path", sorted(WORKFLOWS.rglob("*.py")), ids=lambda p: str(p.relative_to(WORKFLOWS)))
def test_workflow_modules_import_no_private_module_of_another_package(path: Path) -> None:
    private = {
        module
        for module in imported_modules(path)
        if module.startswith("tempo_agents.")
        and not module.startswith("tempo_agents.workflows.")
        and module not in CORE_PRIVATE
        and any(part.startswith("_") for part in module.split("."))
    }
    assert private == set()
