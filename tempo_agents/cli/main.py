"""The argument parser of ``tempo-agents`` and the dispatch to its commands."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import sys
import traceback
from collections.abc import Callable, Coroutine, Sequence
from importlib import import_module
from typing import Any, NoReturn

from tempo_agents import __version__
from tempo_agents.cli._console import CliError, err, exit_now, one_line
from tempo_agents.errors import TempoAgentsError

__all__ = ["COMMANDS", "build_parser", "main", "run_cli"]

COMMANDS: dict[str, tuple[str, str]] = {
    "worker": ("tempo_agents.cli.worker", "add_commands"),
    "dev": ("tempo_agents.cli.worker", "add_commands"),
    "run": ("tempo_agents.cli.run", "add_command"),
    "serve": ("tempo_agents.cli.serve", "add_command"),
    "schedule": ("tempo_agents.cli.schedule", "add_command"),
    "thread": ("tempo_agents.cli.thread", "add_command"),
    "api": ("tempo_agents.cli.api.command", "add_command"),
    "store": ("tempo_agents.cli.store", "add_commands"),
    "audit": ("tempo_agents.cli.audit", "add_commands"),
    "demo": ("tempo_agents.cli.demo.command", "add_command"),
    "erase": ("tempo_agents.cli.erase", "add_command"),
}
"""Each command: the module that defines it and the function that adds its parser. A command's module is imported
only when that command runs (or for the help that lists them all), so ``tempo-agents api`` loads an HTTP client,
not the worker and the server."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or only of ``command`` when it names one; each parsed command carries its
    ``handler``."""
    parser = argparse.ArgumentParser(
        prog="tempo-agents",
        description=(
            "Durable agents on Temporal: run workers, a local dev server, the HTTP API and its client, "
            "single runs and a demo."
        ),
    )
    parser.add_argument("--version", action="version", version=f"tempo-agents {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = [COMMANDS[command]] if command in COMMANDS else COMMANDS.values()
    for module, adder in dict.fromkeys(wanted):
        getattr(import_module(module), adder)(commands)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first word that is not an option (``None`` without one)."""
    return next((word for word in argv if not word.startswith("-")), None)


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; returns the exit code."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="replace")  # never fail on a terminal that cannot show a character
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(words))
    try:
        args = parser.parse_args(words)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    handler: Callable[[argparse.Namespace], Coroutine[Any, Any, int]] = args.handler
    try:
        return asyncio.run(handler(args))
    except CliError as error:
        err(f"tempo-agents: error: {error.message}")
        return error.exit_code
    except TempoAgentsError as error:
        err(f"tempo-agents: error: {one_line(error.message)}")
        return 1
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except BrokenPipeError:
        # stdout was closed early (`tempo-agents run ... | head`): stop quietly, as Unix tools do.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:
        if os.environ.get("TEMPO_AGENTS_DEBUG"):
            traceback.print_exc()
        err(f"tempo-agents: error: {one_line(error)} (set TEMPO_AGENTS_DEBUG=1 for a traceback)")
        return 1


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """The ``tempo-agents`` console script."""
    exit_now(run_cli(argv))
