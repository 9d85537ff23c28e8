"""The site as a reader meets it: ``mkdocs build --strict`` passes (no broken link, missing page or reference to
a name that does not exist), every page is reachable from the navigation, every internal link and anchor
resolves, every public name has its reference entry, and the generated pages say what the code says."""

from __future__ import annotations

import html
import importlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urldefrag

import pytest

import tempo_agents
from tempo_agents.server import create_server
from tests.support.browser import SCREENSHOTS
from tests.support.docs_site import DOCS, ROOT, BuiltPage, build_command, build_site, read_page

pytestmark = pytest.mark.timeout(600)
"""The whole site is built once for the module: on a machine that runs the suite in four processes beside Chromium
that takes minutes, not the seconds it takes alone."""


@pytest.fixture(scope="module")
def screenshots_before_the_build() -> dict[str, bytes]:
    """The browser tests' screenshots as they were when the site's build began (those tests may write them again
    while it runs)."""
    return {shot.name: shot.read_bytes() for shot in SCREENSHOTS.glob("*.png")}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, screenshots_before_the_build: dict[str, bytes]) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("docs") / "site"
    build_site(folder)
    yield folder


@pytest.fixture(scope="module")
def pages(site: Path) -> dict[Path, BuiltPage]:
    """Every built page, parsed once."""
    return {path: read_page(path) for path in sorted(site.rglob("*.html"))}


def _target(page: Path, link: str) -> tuple[Path, str]:
    """The file a link of ``page`` points to and its fragment."""
    address, fragment = urldefrag(link)
    if not address:
        return page, fragment
    target = (page.parent / unquote(address)).resolve()
    return (target / "index.html" if target.is_dir() else target), fragment


def test_the_site_is_built_as_scripts_docs_builds_it(site: Path) -> None:
    """The fixture's build is the script's: strict (a warning fails it) into the folder it is given."""
    command = build_command(site)
    assert command[3:5] == ["build", "--strict"] and command[-2:] == ["--site-dir", str(site)]
    assert (site / "index.html").is_file() and (site / "tutorials" / "slack-approval.html").is_file()


def test_every_page_is_reachable_from_the_home_page(site: Path, pages: dict[Path, BuiltPage]) -> None:
    reached, todo = {site / "index.html"}, [site / "index.html"]
    while todo:
        page = todo.pop()
        for link in pages[page].links:
            target, _ = _target(page, link)
            if target.suffix == ".html" and target in pages and target not in reached:
                reached.add(target)
                todo.append(target)
    unreached = sorted(str(p.relative_to(site)) for p in pages if p not in reached and p.name != "404.html")
    assert unreached == []
    assert len(reached) >= 40, len(reached)  # the sections' pages, not a home page alone


def test_no_internal_link_or_anchor_is_broken(site: Path, pages: dict[Path, BuiltPage]) -> None:
    broken = []
    for page, parsed in pages.items():
        if page.name == "404.html":  # served for any missing address, so its links are absolute on purpose
            continue
        for link in parsed.links:
            target, fragment = _target(page, link)
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link} (no such file)")
            elif fragment and target.suffix == ".html" and fragment not in pages[target].ids:
                broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert broken == []


def test_every_public_name_has_a_reference_entry(site: Path, pages: dict[Path, BuiltPage]) -> None:
    ids = pages[site / "reference" / "python-api.html"].ids
    missing = [name for name in tempo_agents.__all__ if f"tempo_agents.{name}" not in ids]
    assert missing == []


def test_the_dashboard_screenshots_are_the_ones_the_browser_tests_write(
    site: Path, screenshots_before_the_build: dict[str, bytes]
) -> None:
    """Each picture the site shows is the browser tests' own: the one in their folder when the build began or, if a
    test wrote it again meanwhile, the one there now."""
    page = site / "tutorials" / "operations-dashboard.html"
    shots = [link for link in read_page(page).links if "screenshots/" in link]
    assert len(shots) >= 40, shots
    assert SCREENSHOTS == ROOT / "docs" / "screenshots"  # the site's sources hold the tests' output folder itself
    for shot in shots:
        built, _ = _target(page, shot)
        assert built.parent == site / "screenshots"
        written = {screenshots_before_the_build.get(built.name), (SCREENSHOTS / built.name).read_bytes()}
        assert built.read_bytes() in written, built.name


def test_the_cli_reference_is_the_commands_own_help(site: Path) -> None:
    """A nested command's ``--help``, as the installed command prints it, is on the page word for word."""
    printed = subprocess.run(
        [sys.executable, "-m", "tempo_agents.cli", "api", "run", "list", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        check=True,
    ).stdout
    shown = html.unescape(re.sub(r"<[^>]+>", "", (site / "reference" / "cli.html").read_text()))
    assert "usage: tempo-agents api run list" in printed
    assert printed.rstrip() in shown


def test_the_http_reference_holds_every_operation_of_the_openapi_document(site: Path) -> None:
    document = create_server(tempo_agents.App(agents=[])).openapi()
    shown = (site / "reference" / "http-api.html").read_text()
    missing = [
        f"{method.upper()} {path}"
        for path, operations in document["paths"].items()
        for method in operations
        if f"<code>{method.upper()} {path}</code>" not in shown
    ]
    assert missing == []
    assert len(document["paths"]) >= 40


@pytest.mark.parametrize(
    ("page", "example"),
    [
        ("get-started/first-agent.html", "first_agent.py"),
        ("tutorials/waiting-for-people.html", "waiting_for_people.py"),
        ("how-to/edit-then-approve.html", "edit_then_approve.py"),
        ("tutorials/slack-approval.html", "slack_approval.py"),
    ],
)
def test_an_included_example_is_shown_whole(site: Path, page: str, example: str) -> None:
    shown = html.unescape(re.sub(r"<[^>]+>", "", (site / page).read_text()))
    lines = [line for line in (ROOT / "examples" / example).read_text().splitlines() if line.strip()]
    assert [line for line in lines if line not in shown] == []


def test_every_public_name_of_a_documented_feature_package_has_a_reference_entry(
    site: Path, pages: dict[Path, BuiltPage]
) -> None:
    page = site / "reference" / "feature-packages.html"
    source = (DOCS / "reference" / "feature-packages.md").read_text()
    documented = re.findall(r"^::: (tempo_agents\.\w+)$", source, re.M)
    assert len(documented) >= 5, documented
    ids = pages[page].ids
    missing = [
        f"{package}.{name}"
        for package in documented
        for name in importlib.import_module(package).__all__
        if f"{package}.{name}" not in ids
    ]
    assert missing == []
