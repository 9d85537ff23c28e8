"""The layout the code keeps: no module of the package over 600 lines, and no circle between its folders (a folder
imports another only if that one imports nothing of it back, through any number of folders); each module declares
its __all__."""

from __future__ import annotations

import re
from pathlib import Path

import grimp

import tempo_agents

PACKAGE = Path(tempo_agents.__file__).parent
MAX_LINES = 600


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines (split them by concept): {long}"


def folder_of(module: str) -> str:
    """``tempo_agents.client.app`` -> ``client``; a top-level module is its own folder."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def folder_circles() -> list[list[str]]:
    """The groups of folders that import each other, directly or through other folders."""
    graph = grimp.build_graph("tempo_agents", cache_dir=None)
    arrows: dict[str, set[str]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            source, target = folder_of(module), folder_of(imported)
            if source != target and "tempo_agents" not in (source, target):
                arrows.setdefault(source, set()).add(target)
    reach: dict[str, set[str]] = {}
    for start in arrows:
        seen: set[str] = set()
        todo = list(arrows[start])
        while todo:
            folder = todo.pop()
            if folder not in seen:
                seen.add(folder)
                todo.extend(arrows.get(folder, ()))
        reach[start] = seen
    circles = {tuple(sorted(f for f in reach if start in reach[f] and f in reach[start])) for start in reach}
    return sorted([list(c) for c in circles if len(c) > 1])


def test_no_two_folders_import_each_other() -> None:
    assert folder_circles() == [], f"folders that import each other: {folder_circles()}"


def test_every_module_says_what_it_exports() -> None:
    """Each module's ``__all__`` is its public surface; everything else in it is the package's own business."""
    silent = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if not re.search(r"^(__all__\b|from \S+ import __all__ as __all__$)", path.read_text(encoding="utf-8"), re.M)
    ]
    assert silent == [], f"modules without __all__: {silent}"
