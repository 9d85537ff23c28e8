"""The configuration page names every environment variable the package reads, and nothing it does not read."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tempo_agents
from tempo_agents.errors import TempoAgentsError
from tempo_agents.server.errors import TEMPORAL_UNAVAILABLE
from tests.support.docs_site import DOCS

PAGE = DOCS / "reference" / "configuration.md"
ERROR_CODES = {TempoAgentsError.code, TEMPORAL_UNAVAILABLE}
"""Constants spelled like a variable that are error codes, not settings."""


def _variables_in_the_code() -> set[str]:
    found: set[str] = set()
    for path in Path(tempo_agents.__file__).parent.rglob("*.py"):
        texts = [node.value for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Constant)]
        found.update(
            text for text in texts if isinstance(text, str) and re.fullmatch(r"TEMPO(_AGENTS|RAL)_[A-Z_]+", text)
        )
    return found - ERROR_CODES


def test_every_variable_the_code_reads_is_on_the_configuration_page() -> None:
    variables = _variables_in_the_code()
    assert len(variables) >= 15, variables
    named = set(re.findall(r"`(TEMPO(?:_AGENTS|RAL)_[A-Z_]+)`", PAGE.read_text()))
    assert sorted(variables - named) == []
    assert sorted(named - variables) == []
