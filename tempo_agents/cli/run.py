"""The ``run`` command: start a run of an agent and print its stream."""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from typing import Any

from tempo_agents.cli._console import CliError, err, out
from tempo_agents.cli._options import add_app_options, add_server_options, connection_options
from tempo_agents.cli.app_loading import configure_app, connect, load_app
from tempo_agents.cli.printing import ChunkPrinter
from tempo_agents.client.app import App
from tempo_agents.errors import ConfigurationError, ThreadBusyError
from tempo_agents.workflows.thread_payloads import DEFAULT_THREAD_STRATEGY, THREAD_STRATEGIES

__all__ = ["add_command", "cmd_run"]


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``run``."""
    run = commands.add_parser(
        "run",
        help="start a run of an agent and print its stream",
        description="Start a run of an agent and print its chunks as they arrive. A worker must be running.",
    )
    run.add_argument("agent", help="agent id")
    run.add_argument("prompt", help="the user message")
    add_server_options(run)
    add_app_options(run, required=True)
    run.add_argument("--offsets", action="store_true", help="show every chunk with its journal offset")
    run.add_argument("--thread", metavar="ID", help="memory thread of the run (with --resource)")
    run.add_argument("--resource", metavar="ID", help="memory resource of the run (with --thread)")
    run.add_argument(
        "--thread-strategy",
        choices=THREAD_STRATEGIES,
        help=f"when the thread has an active run: {', '.join(THREAD_STRATEGIES)} (default {DEFAULT_THREAD_STRATEGY})",
    )
    run.add_argument(
        "--waiting-holds-thread",
        action="store_true",
        default=None,
        help="a run that waits for a person keeps its thread (default: it yields it to the next message)",
    )
    run.set_defaults(handler=cmd_run)


async def cmd_run(args: argparse.Namespace) -> int:
    """Start a run of ``agent`` with ``prompt`` and print its chunks; exits 1 when the run failed."""
    app = configure_app(
        load_app(args.app), store=args.store, task_queue=args.task_queue, notifications=args.notifications
    )
    try:
        app.agent(args.agent)
    except ConfigurationError as error:
        raise CliError(error.message, 2) from None
    if (args.thread is None) != (args.resource is None):
        raise CliError("--thread and --resource go together", 2)
    if args.thread_strategy is not None and args.thread is None:
        raise CliError("--thread-strategy needs --thread and --resource", 2)
    options: dict[str, Any] = {}
    if args.thread is not None:
        options["memory"] = {"thread": args.thread, "resource": args.resource}
    if args.thread_strategy is not None:
        options["thread_strategy"] = args.thread_strategy
    if args.waiting_holds_thread:
        options["waiting_holds_thread"] = True
    await connect(app, args.address, args.namespace, **connection_options(args))
    if not await _has_pollers(app):
        err(
            f"warning: no worker is polling task queue '{app.task_queue}' right now; the run waits until one does "
            f"(tempo-agents worker --app {args.app} --address {args.address})"
        )
    try:
        stream = await app.agent(args.agent).stream(args.prompt, **options)
    except ThreadBusyError as error:
        raise CliError(error.message, 1) from None
    outcome = stream.thread_outcome
    if outcome is not None and outcome.outcome == "queued":
        out(f"run {stream.run_id} (agent {args.agent}) queued at {outcome.position} behind {outcome.active_run_id}")
    elif outcome is not None and outcome.outcome == "steered":
        out(f"message steered into run {stream.run_id}")
    else:
        out(f"run {stream.run_id} (agent {args.agent})")
    printer = ChunkPrinter(sys.stdout, offsets=args.offsets)
    async for chunk in stream.full_stream:
        printer.write(chunk)
    printer.close()
    return 1 if printer.failed else 0


async def _has_pollers(app: App) -> bool:
    """Whether a worker polls the App's task queue now (``True`` when the server cannot tell)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    client = app.client
    try:
        response = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=app.task_queue),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            ),
            timeout=timedelta(seconds=5),
        )
    except Exception:
        return True
    return bool(response.pollers)
