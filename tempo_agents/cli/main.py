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
from typing import Any, NoReturn

from tempo_agents import __version__
from tempo_agents.cli import run, schedule, serve, store, thread, worker
from tempo_agents.cli._console import CliError, err, exit_now, one_line
from tempo_agents.cli.api import command as api
from tempo_agents.cli.demo import command as demo
from tempo_agents.errors import TempoAgentsError

__all__ = ["build_parser", "main", "run_cli"]


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; each parsed command carries its ``handler``."""
    parser = argparse.ArgumentParser(
        prog="tempo-agents",
        description=(
            "Durable agents on Temporal: run workers, a local dev server, the HTTP API and its client, "
            "single runs and a demo."
        ),
    )
    parser.add_argument("--version", action="version", version=f"tempo-agents {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    worker.add_commands(commands)
    run.add_command(commands)
    serve.add_command(commands)
    schedule.add_command(commands)
    thread.add_command(commands)
    api.add_command(commands)
    store.add_commands(commands)
    demo.add_command(commands)
    return parser


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; returns the exit code."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="replace")  # never fail on a terminal that cannot show a character
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
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
