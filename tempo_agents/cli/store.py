"""The ``store`` commands: ``store migrate`` creates or upgrades a store's tables ahead of the workers."""

from __future__ import annotations

import argparse

from tempo_agents.cli._console import CliError, out
from tempo_agents.errors import ConfigurationError
from tempo_agents.store.url import DEFAULT_STORE_URL, STORE_ENV, open_store

__all__ = ["add_commands", "cmd_migrate"]


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``store migrate``."""
    store = commands.add_parser(
        "store",
        help="manage a store (run journals, transcripts, memory threads)",
        description="Manage the store that runs keep their journals, transcripts and memory threads in.",
    )
    actions = store.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    migrate = actions.add_parser(
        "migrate",
        help="create or upgrade the store's tables now",
        description=(
            "Create or upgrade the store's tables now, for operators who prefer not to let workers do it on "
            "first use (they do, under a lock, when nobody ran this). Safe to run any number of times."
        ),
    )
    migrate.add_argument(
        "--store",
        metavar="URL",
        help=f"e.g. postgresql://user:password@host:5432/db (default ${STORE_ENV}, else {DEFAULT_STORE_URL})",
    )
    migrate.set_defaults(handler=cmd_migrate)


async def cmd_migrate(args: argparse.Namespace) -> int:
    """Migrate the store ``--store`` names and print what was done."""
    try:
        store = open_store(args.store)
    except ConfigurationError as error:
        raise CliError(f"--store: {error.message}", 2) from None
    try:
        out(await store.migrate())
    finally:
        await store.close()
    return 0
