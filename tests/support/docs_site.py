"""What the site's tests share: the repository's paths, the site built once into a folder, and the links and
ids of a built page."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

__all__ = [
    "DOCS",
    "ROOT",
    "BuiltPage",
    "PythonBlock",
    "build_command",
    "build_site",
    "code_blocks",
    "expanded",
    "page_sources",
    "python_blocks",
    "read_page",
]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


SCRIPT = ROOT / "scripts" / "docs"


def build_command(site_dir: Path) -> list[str]:
    """The command ``scripts/docs build DIR`` runs once its venv is ready (read from the script's ``build)`` arm, so
    the tests build the site exactly as the script does), with this interpreter's mkdocs and ``DIR`` given."""
    arm = re.search(r"^\s*build\) exec (.+?) ;;$", SCRIPT.read_text(), re.M)
    assert arm is not None, "scripts/docs has no build) arm"
    words = shlex.split(arm.group(1))
    assert words[0] == ".venv/bin/mkdocs", words
    return [sys.executable, "-m", "mkdocs", *(str(site_dir) if word == "${2:-site}" else word for word in words[1:])]


def build_site(site_dir: Path) -> str:
    """``scripts/docs build site_dir`` (the script's own command; its venv is this one); its output (the build
    must succeed)."""
    done = subprocess.run(
        build_command(site_dir),
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(site_dir.parent)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stderr


class BuiltPage(HTMLParser):
    """The ids and the internal links (``href`` and ``src``) of one built page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value and not value.startswith(("http:", "https:", "mailto:", "data:")):
                self.links.append(value)


def read_page(path: Path) -> BuiltPage:
    """The ids and internal links of the built page at ``path``."""
    page = BuiltPage()
    page.feed(path.read_text(encoding="utf-8"))
    return page


INCLUDE = re.compile(r'^--8<-- "([^":]+)(?::(\d+):)?"$', re.M)
FENCE = re.compile(r"^```(?:\{\.(\w+)[^}]*\}|(\w*))\n(.*?)^```$", re.M | re.S)
"""A fenced block: its language (``python`` or ``{.python title="..."}``, the form an included file takes so that
ruff's Markdown formatting leaves the include line alone) and its code."""


def page_sources() -> list[Path]:
    """Every Markdown page of the site's sources (not the build's hook)."""
    return sorted(path for path in DOCS.rglob("*.md") if "_hooks" not in path.parts)


def expanded(text: str) -> str:
    """``text`` with each ``--8<-- "path"`` line (or ``"path:N:"``, from line N on) replaced by what it includes,
    as the build does."""

    def include(found: re.Match[str]) -> str:
        lines = (ROOT / found.group(1)).read_text(encoding="utf-8").splitlines(keepends=True)
        return "".join(lines[int(found.group(2) or 1) - 1 :])

    return INCLUDE.sub(include, text)


def code_blocks(language: str) -> list[tuple[Path, str]]:
    """(page, code) of every fenced block in ``language`` on the site's pages, includes expanded."""
    blocks: list[tuple[Path, str]] = []
    for page in page_sources():
        found = FENCE.findall(expanded(page.read_text()))
        blocks += [(page, code) for attributed, plain, code in found if (attributed or plain) == language]
    return blocks


@dataclass(frozen=True)
class PythonBlock:
    """A Python block of a page: its code (includes expanded), its place among the page's Python blocks (from 1),
    the page's line its code starts on, and whether it is a file of examples/ the page includes (a whole program,
    run as one)."""

    page: Path
    number: int
    line: int
    code: str
    included: bool

    @property
    def name(self) -> str:
        """``how-to/threads.md#2``: the page, relative to docs/, and the block's number on it."""
        return f"{self.page.relative_to(DOCS)}#{self.number}"

    def __str__(self) -> str:
        return f"{self.name}:{self.code.splitlines()[0] if self.code else ''}"


def python_blocks() -> list[PythonBlock]:
    """Every Python block on the site's pages, in page order."""
    blocks: list[PythonBlock] = []
    for page in page_sources():
        text = page.read_text()
        found = [fence for fence in FENCE.finditer(text) if (fence.group(1) or fence.group(2)) == "python"]
        for number, fence in enumerate(found, start=1):
            code, line = fence.group(3), text.count("\n", 0, fence.start(3)) + 1
            blocks.append(PythonBlock(page, number, line, expanded(code), code.startswith('--8<-- "examples/')))
    return blocks
