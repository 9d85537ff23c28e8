"""The ``thread`` command: a memory thread's runs (active, queued, done) and messages, and a queued run cancelled."""

from __future__ import annotations

import argparse
import json

from tempo_agents.cli._console import CliError, out
from tempo_agents.cli._options import add_app_options, add_server_options, connection_options
from tempo_agents.cli.app_loading import configure_app, connect, load_app
from tempo_agents.client.app import App

__all__ = ["add_command", "cmd_thread"]


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``thread`` and its sub-commands."""
    thread = commands.add_parser(
        "thread",
        help="a memory thread: its runs and messages (show), a queued run taken out of its queue (cancel)",
        description="A memory thread's runs (one active at a time, the rest queued) and its messages.",
    )
    actions = thread.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = actions.add_parser("show", help="the thread's runs and messages as JSON")
    show.add_argument("thread_id", metavar="THREAD", help="the thread's id")
    cancel = actions.add_parser("cancel", help="take a queued run out of the thread's queue before it starts")
    cancel.add_argument("thread_id", metavar="THREAD", help="the thread's id")
    cancel.add_argument("run_id", metavar="RUN", help="the queued run's id")
    for action in (show, cancel):
        action.add_argument("--resource", required=True, metavar="ID", help="the thread's resource id")
        add_server_options(action)
        add_app_options(action, required=True)
    thread.set_defaults(handler=cmd_thread)


async def cmd_thread(args: argparse.Namespace) -> int:
    app: App = configure_app(load_app(args.app), store=args.store, task_queue=args.task_queue)
    await connect(app, args.address, args.namespace, **connection_options(args))
    if args.action == "show":
        snapshot = await app.thread(args.thread_id, resource_id=args.resource)
        out(json.dumps(snapshot.to_wire(), indent=2, ensure_ascii=False))
        return 0
    if not await app.cancel_queued_run(args.thread_id, args.run_id, resource_id=args.resource):
        raise CliError(f'run "{args.run_id}" is not queued on thread "{args.thread_id}"', 1)
    out(f"run {args.run_id} taken out of thread {args.thread_id}'s queue")
    return 0
