"""The package has no import circle: every import of one tempo_agents module by another (at the top, inside a
function or under ``TYPE_CHECKING``, as grimp reads them) goes one way. ``lint-imports`` (scripts/test) checks
the layers of pyproject.toml's contract; this checks every module, listed or not."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest


def import_cycles(package: str) -> list[list[str]]:
    """The strongly connected components of the package's import graph with more than one module, largest first."""
    graph = grimp.build_graph(package, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return sorted(cycles, key=len, reverse=True)


def test_tempo_agents_has_no_import_circle() -> None:
    cycles = import_cycles("tempo_agents")
    assert cycles == [], "modules that import each other, directly or through others:\n" + "\n".join(
        " ".join(cycle) for cycle in cycles
    )


def test_a_circle_through_a_type_checking_import_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "circled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "client.py").write_text("from circled import worker\n")
    (package / "worker.py").write_text("from circled import definitions\n")
    (package / "definitions.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from circled.client import App\n"
    )
    (package / "alone.py").write_text("from circled import definitions\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("circled") == [["circled.client", "circled.definitions", "circled.worker"]]
