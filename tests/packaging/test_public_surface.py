"""The public surface a user imports: every name the README and the docs use comes from ``tempo_agents``,
``__all__`` holds only names that import, and the installed version is what ``--version`` and ``__version__`` say."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import tempo_agents
from tests.support.docs_site import code_blocks

README = Path(__file__).resolve().parents[2] / "README.md"


def _documented_imports() -> list[tuple[str, str]]:
    """(module, name) of every ``from tempo_agents... import name`` in the Python blocks of the README and the
    docs' pages (the examples they include among them)."""
    imported: list[tuple[str, str]] = []
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
    for _, block in code_blocks("python"):
        blocks.append(block)
    for block in blocks:
        tree = ast.parse(block)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tempo_agents"):
                imported += [(node.module or "", alias.name) for alias in node.names]
    return imported


def test_the_docs_import_every_name_from_the_package_root() -> None:
    imported = _documented_imports()
    assert len(imported) >= 20, imported  # the docs' examples, not an empty parse
    elsewhere = [f"{module}.{name}" for module, name in imported if module != "tempo_agents"]
    assert elsewhere == []
    assert {name for _, name in imported} <= set(tempo_agents.__all__)


def test_every_name_in_all_imports() -> None:
    missing = [name for name in tempo_agents.__all__ if not hasattr(tempo_agents, name)]
    assert missing == []
    assert len(set(tempo_agents.__all__)) == len(tempo_agents.__all__)
    # A star import gives the same names (the lazy MCP and telemetry ones included: the test extra has both).
    namespace: dict[str, object] = {}
    exec("from tempo_agents import *", namespace)
    assert set(tempo_agents.__all__) <= set(namespace)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        tempo_agents.no_such_thing  # noqa: B018
    except AttributeError as error:
        assert "no_such_thing" in str(error)
    else:
        raise AssertionError("tempo_agents.no_such_thing resolved")


def test_the_version_is_the_installed_distributions() -> None:
    assert tempo_agents.__version__ == version("tempo-agents")
    printed = subprocess.run(
        [sys.executable, "-m", "tempo_agents.cli", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert printed.strip() == f"tempo-agents {version('tempo-agents')}"
