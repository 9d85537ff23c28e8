"""The MkDocs hook that writes the reference pages generated from the code at build time, so they cannot drift
from it: the CLI's pages from its own argument parser (the text ``--help`` prints), the HTTP API's from the
server's OpenAPI document, the error codes from the package's exception classes. It also adds the benchmark plots
of ``bench/results`` to the site where the Benchmarks page shows them, and the table of moved import paths to
the versioning page."""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_hooks"))  # MkDocs loads a hook by path: its sibling modules by name

from reference_cli import cli_reference  # noqa: E402
from reference_errors import error_codes_reference  # noqa: E402
from reference_http import http_reference  # noqa: E402
from reference_moved import MARKER, moved_table  # noqa: E402

__all__ = ["GENERATED", "PLOTS", "on_files", "on_page_markdown"]

GENERATED = {
    "reference/cli.md": cli_reference,
    "reference/http-api.md": http_reference,
    "reference/error-codes.md": error_codes_reference,
}
"""Each generated page (its path in the site's sources) and the function that writes its Markdown."""

PLOTS = ROOT / "bench" / "results"
"""The benchmark plots, published under ``benchmarks/`` beside the Benchmarks page."""


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    """Add the generated pages and the benchmark plots to the site's files."""
    for uri, write in GENERATED.items():
        files.append(File.generated(config, uri, content=write()))
    for plot in sorted(PLOTS.glob("*.png")):
        files.append(File.generated(config, f"benchmarks/{plot.name}", abs_src_path=str(plot)))
    return files


def on_page_markdown(markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Put the table of moved paths where the versioning page asks for it."""
    return markdown.replace(MARKER, moved_table())
