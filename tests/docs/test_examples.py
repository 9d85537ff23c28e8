"""The docs' examples as code: the first agent runs against a real dev server as the README and the site show
it, every Python block on the site compiles, and every ``tempo-agents`` command line on it is one the command
accepts."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents.cli.main import build_parser
from tests.support.docs_site import ROOT, code_blocks, page_sources

FIRST_AGENT = ROOT / "examples" / "first_agent.py"


def _without_docstring(source: str) -> str:
    body = ast.parse(source).body[0]
    assert isinstance(body, ast.Expr) and isinstance(body.value, ast.Constant)
    return "".join(source.splitlines(keepends=True)[body.end_lineno or 0 :]).lstrip("\n")


def test_the_readme_shows_the_first_agent_as_it_is_in_examples() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## A first agent") :]
    shown = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert shown is not None
    assert shown.group(1) == _without_docstring(FIRST_AGENT.read_text())


PROGRAMS = {
    "first_agent.py": ["It is 21 degrees in Oslo. stop"],  # the text, then the finish reason
    "edit_then_approve.py": ["suspended", "stop [{'paid': 450, 'to': 'acme-escrow'}]"],
    "waiting_for_people.py": ["suspended", "stop Charged 990. [{'charged': 990}]"],
}
"""Each example program the docs include and the lines it prints last, as a reader running it sees them."""


def test_every_example_program_the_docs_include_is_run_here() -> None:
    included = {name for _, name in re.findall(r'--8<-- "(examples/)([^"/]+\.py)"', _all_pages())}
    assert included == set(PROGRAMS)


def _all_pages() -> str:
    return "\n".join(page.read_text() for page in page_sources())


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_an_example_program_runs(name: str, temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    address = temporal_env.client.service_client.config.target_host
    program = tmp_path / name
    program.write_text((ROOT / "examples" / name).read_text().replace("localhost:7233", address))
    done = subprocess.run([sys.executable, str(program)], cwd=tmp_path, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout.splitlines()[-len(PROGRAMS[name]) :]
    assert [line for line, expected in zip(printed, PROGRAMS[name], strict=True) if expected not in line] == []


@pytest.mark.parametrize(("page", "code"), code_blocks("python"), ids=lambda value: getattr(value, "stem", ""))
def test_every_python_block_compiles(page: Path, code: str) -> None:
    """A block is compiled as Python (awaits at its top level allowed: the docs show calls from an async body)."""
    compile(code, str(page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def _command_lines(script: str) -> list[list[str]]:
    """The arguments of each ``tempo-agents`` invocation in a shell block. A line that spells alternatives
    (``list|show``, no spaces around the bar, as a pipe would have) is a synopsis, not a command line."""
    found: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        if re.search(r"\w\|\w", line.split("#")[0]):
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            continue
        command: list[str] = []
        at_start = True  # the first word of a command (after any VAR=value assignments)
        for word in [*words, ";"]:
            if word and set(word) <= set(";&|"):
                if command:
                    found.append(command)
                command, at_start = [], True
            elif command or (at_start and word == "tempo-agents"):
                command.append(word)
            elif not re.fullmatch(r"\w+=.*", word):
                at_start = False
    return [command[1:] for command in found]


def test_every_command_line_on_the_site_is_accepted() -> None:
    parser = build_parser()
    lines = [args for language in ("bash", "sh") for _, code in code_blocks(language) for args in _command_lines(code)]
    assert len(lines) >= 15, lines
    refused = []
    for args in lines:
        try:
            parser.parse_args(args)
        except SystemExit:
            refused.append(" ".join(args))
    assert refused == []
