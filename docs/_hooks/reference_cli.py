"""The CLI reference page: every command's ``--help``, taken from the parser ``tempo-agents`` itself runs."""

from __future__ import annotations

import argparse
import os

from tempo_agents.cli.main import build_parser

__all__ = ["cli_reference", "command_helps"]

HELP_WIDTH = "100"
"""The column width the help text is wrapped at, whatever terminal builds the site."""


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """(name, parser) of each direct subcommand, in the order ``--help`` lists them."""
    found: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found += [(name, sub) for name, sub in action.choices.items() if sub not in (s for _, s in found)]
    return found


def command_helps() -> list[tuple[str, str]]:
    """(command line, help text) of ``tempo-agents`` and each of its commands, depth first."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        pending = [("tempo-agents", build_parser())]
        helps: list[tuple[str, str]] = []
        while pending:
            name, parser = pending.pop(0)
            helps.append((name, parser.format_help()))
            pending[0:0] = [(f"{name} {sub}", child) for sub, child in _subcommands(parser)]
        return helps
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def cli_reference() -> str:
    """The Markdown of the CLI reference page."""
    parts = [
        "# CLI reference\n",
        "Every command of `tempo-agents` with the text its `--help` prints, generated from the command's own parser "
        "when the site is built. Guides that use a command: [Running workers](../how-to/workers.md), "
        "[Serve the HTTP API](../how-to/http-api.md), [Schedules](../how-to/schedules.md).\n",
    ]
    for command, text in command_helps():
        level = "#" * min(6, command.count(" ") + 2)
        parts.append(f"{level} `{command}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)
