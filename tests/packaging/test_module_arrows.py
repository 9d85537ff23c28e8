"""Imports that point down stay pointing down: the model adapters, telemetry and the store URL module."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tempo_agents"


def imported_modules(path: Path) -> set[str]:
    """Every ``tempo_agents`` module a file or folder imports, at any depth of its code."""
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    found: set[str] = set()
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "tempo_agents"}


def test_models_import_nothing_above_them() -> None:
    outside = {name for name in imported_modules(PACKAGE / "models") if not name.startswith("tempo_agents.models")}
    assert outside == {"tempo_agents.errors", "tempo_agents._wire"}


def test_telemetry_does_not_import_the_worker() -> None:
    assert not {name for name in imported_modules(PACKAGE / "telemetry") if name.startswith("tempo_agents.worker")}


def test_the_postgres_store_does_not_import_the_store_url_module() -> None:
    assert "tempo_agents.store.url" not in imported_modules(PACKAGE / "store" / "postgres")
    assert "tempo_agents.store.postgres" in imported_modules(PACKAGE / "store" / "url.py")
