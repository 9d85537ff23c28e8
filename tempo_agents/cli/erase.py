"""The ``erase`` command: everything of a resource, a thread or a run deleted from the store and from Temporal."""

from __future__ import annotations

import argparse
import json

from tempo_agents.cli._console import CliError, out
from tempo_agents.cli._options import add_app_options, add_server_options, connection_options
from tempo_agents.cli.app_loading import configure_app, connect, load_app
from tempo_agents.client.app import App
from tempo_agents.errors import ConfigurationError

__all__ = ["add_command", "cmd_erase"]


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``erase``."""
    erase = commands.add_parser(
        "erase",
        help="erase everything of a resource, a thread or a run (store rows, Temporal executions, schedules)",
        description=(
            "Erase everything of a resource (--resource), of one thread (--thread with --resource) or of one run "
            "(--run): its schedules are deleted, what still runs is terminated, its rows leave the store and its "
            "executions leave Temporal. Prints what was done, by id only, as JSON. Running it again is harmless."
        ),
    )
    erase.add_argument("--resource", metavar="ID", help="the resource (tenant, customer) to erase")
    erase.add_argument("--thread", metavar="ID", help="one thread of --resource to erase")
    erase.add_argument(
        "--run", metavar="ID", help="one run to erase (with the sub-agent runs it started and its forks)"
    )
    add_server_options(erase)
    add_app_options(erase, required=True)
    erase.set_defaults(handler=cmd_erase)


async def cmd_erase(args: argparse.Namespace) -> int:
    app: App = configure_app(load_app(args.app), store=args.store, task_queue=args.task_queue)
    await connect(app, args.address, args.namespace, **connection_options(args))
    try:
        report = await app.erase(resource=args.resource, thread=args.thread, run=args.run)
    except ConfigurationError as error:
        raise CliError(error.message, 2) from None
    out(json.dumps(report.to_wire(), indent=2, ensure_ascii=False))
    return 0
