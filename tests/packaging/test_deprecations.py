"""The import paths of the previous release (tests/durability/previous_release holds its source) that the
feature-folder layout moved: each still imports, gives the same objects as the new path, and warns with a
``DeprecationWarning`` naming the new one. One test a moved module or name, and one that no path of that release
was forgotten."""

from __future__ import annotations

import ast
import importlib
import sys
import tarfile
import warnings
from pathlib import Path

import pytest

from tempo_agents.deprecations import MOVED_MODULES, MOVED_NAMES

PREVIOUS_RELEASE = (
    Path(__file__).resolve().parents[1] / "durability" / "previous_release" / "tempo_agents-1c7297c.tar.gz"
)


def _import_fresh(module: str) -> tuple[object, list[str]]:
    """``module`` imported anew (not from an earlier test's import) and the deprecation warnings it raised."""
    for name in [name for name in sys.modules if name == module or name.startswith(module + ".")]:
        if name in MOVED_MODULES:
            del sys.modules[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imported = importlib.import_module(module)
    return imported, [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize(("old", "new"), sorted(MOVED_MODULES.items()))
def test_a_moved_module_imports_from_its_old_path_with_a_warning(old: str, new: str) -> None:
    module, messages = _import_fresh(old)
    assert f"{old} moved to {new}; import it from there" in messages
    target = importlib.import_module(new)
    names = list(getattr(target, "__all__", []))
    assert names, f"{new} exports nothing"
    assert all(getattr(module, name) is getattr(target, name) for name in names)
    namespace: dict[str, object] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        exec(f"from {old} import {names[0]}", namespace)
    assert namespace[names[0]] is getattr(target, names[0])


@pytest.mark.parametrize(("old", "new"), sorted(MOVED_NAMES.items()), ids=lambda pair: ".".join(pair))
def test_a_moved_name_is_found_at_its_old_place_with_a_warning(old: tuple[str, str], new: tuple[str, str]) -> None:
    module = importlib.import_module(old[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = getattr(module, old[1])
    assert found is getattr(importlib.import_module(new[0]), new[1])
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert messages == [f"{old[0]}.{old[1]} moved to {new[0]}.{new[1]}; import it from there"]
    assert caught[0].filename == __file__  # the warning points at the code that reads the old name


def test_an_unknown_name_of_a_module_with_moved_names_is_still_an_attribute_error() -> None:
    module = importlib.import_module("tempo_agents.agent")
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018


def _previous_release() -> dict[str, set[str]]:
    """Each module of the previous release and the public names it defines at its top level."""
    modules: dict[str, set[str]] = {}
    with tarfile.open(PREVIOUS_RELEASE) as archive:
        for member in archive.getmembers():
            if not (member.isfile() and member.name.endswith(".py") and "tempo_agents/" in member.name):
                continue
            parts = member.name[member.name.index("tempo_agents/") :].removesuffix(".py").split("/")
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            source = archive.extractfile(member)
            assert source is not None
            tree = ast.parse(source.read())
            modules[module] = _defined_names(tree)
    return modules


def _defined_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def test_every_module_and_name_of_the_previous_release_still_imports() -> None:
    modules = _previous_release()
    assert len(modules) > 100  # the whole package, not an empty archive
    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for module, names in sorted(modules.items()):
            try:
                imported = importlib.import_module(module)
            except ImportError:
                missing.append(module)
                continue
            missing += [f"{module}.{name}" for name in sorted(names) if not hasattr(imported, name)]
    assert missing == []
