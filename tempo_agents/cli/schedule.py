"""The ``schedule`` command: create, list, pause, unpause, trigger and delete an App's schedules."""

from __future__ import annotations

import argparse
import json

from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.agent.app import App
from tempo_agents.agent.schedules import OVERLAP_POLICIES, ScheduleRequest, ScheduleView
from tempo_agents.cli._console import CliError, out
from tempo_agents.cli._options import add_app_options, add_server_options, connection_options
from tempo_agents.cli.app_loading import configure_app, connect, load_app
from tempo_agents.errors import ConfigurationError


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``schedule`` and its sub-commands."""
    schedule = commands.add_parser(
        "schedule",
        help="runs of an agent on a Temporal Schedule: create, list, pause, unpause, trigger, delete",
        description="Runs of an agent on a Temporal Schedule; each run is an ordinary run (a worker must be running).",
    )
    actions = schedule.add_subparsers(dest="action", required=True, metavar="ACTION")

    create = actions.add_parser("create", help="create a schedule", description="Create a schedule of runs.")
    create.add_argument("agent", help="agent id")
    create.add_argument("message", help="the user message of every run")
    spec = create.add_mutually_exclusive_group(required=True)
    spec.add_argument("--cron", metavar="EXPR", help="a cron expression, e.g. '0 9 * * 1-5'")
    spec.add_argument("--every", metavar="DURATION", help="an interval: 30s, 15m, 1h30m, 7d")
    create.add_argument("--id", dest="schedule_id", metavar="ID", help="the schedule's id (default <agent>-<random>)")
    create.add_argument("--time-zone", metavar="IANA", help="the cron's time zone, e.g. Europe/Paris")
    create.add_argument("--jitter", metavar="DURATION", help="delay each run by up to this much")
    create.add_argument("--overlap", choices=sorted(OVERLAP_POLICIES), default="skip", help="default skip")
    create.add_argument("--catchup-window", metavar="DURATION", help="how late a missed run may still start")
    create.add_argument("--thread", metavar="ID", help="memory thread of the runs (with --resource)")
    create.add_argument("--resource", metavar="ID", help="memory resource of the runs (with --thread)")
    create.add_argument("--paused", action="store_true", help="create it paused")
    create.add_argument("--note", help="a note kept with the schedule")
    actions.add_parser("list", help="the App's schedules, their next and recent runs")
    for name, text in (
        ("describe", "a schedule as JSON"),
        ("pause", "start no more runs until unpaused"),
        ("unpause", "start runs again"),
        ("trigger", "start a run now"),
        ("delete", "delete the schedule (its runs stay)"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("schedule_id", metavar="ID", help="the schedule's id")
        if name in ("pause", "unpause"):
            action.add_argument("--note", help="why")
    for action in actions.choices.values():
        add_server_options(action)
        add_app_options(action, required=True)
    schedule.set_defaults(handler=cmd_schedule)


def _line(view: ScheduleView) -> str:
    when = ", ".join(view.cron) or ", ".join(f"every {seconds:g}s" for seconds in view.every_seconds)
    state = "paused" if view.paused else "active"
    next_run = view.next_runs[0].isoformat() if view.next_runs and not view.paused else "-"
    last = view.recent_runs[-1].run_id if view.recent_runs else "-"
    return f"{view.id}  agent={view.agent_id}  {when}  {state}  runs={view.runs_started}  next={next_run}  last={last}"


async def cmd_schedule(args: argparse.Namespace) -> int:
    app: App = configure_app(
        load_app(args.app), store=args.store, task_queue=args.task_queue, notifications=args.notifications
    )
    await connect(app, args.address, args.namespace, **connection_options(args))
    if args.action == "create":
        if (args.thread is None) != (args.resource is None):
            raise CliError("--thread and --resource go together", 2)
        request = ScheduleRequest(
            agent_id=args.agent,
            message=args.message,
            cron=args.cron,
            every=args.every,
            schedule_id=args.schedule_id,
            time_zone=args.time_zone,
            jitter=args.jitter,
            overlap=args.overlap,
            catchup_window=args.catchup_window,
            paused=args.paused,
            note=args.note,
            thread=args.thread,
            resource=args.resource,
        )
        try:
            schedule = await request.create(app)
        except ConfigurationError as error:
            raise CliError(error.message, 2) from None
        out(f"schedule {schedule.id} created")
        out(_line(await schedule.describe()))
        return 0
    if args.action == "list":
        views = await app.list_schedules()
        for view in views:
            out(_line(view))
        if not views:
            out("no schedules")
        return 0
    schedule = app.get_schedule(args.schedule_id)
    try:
        await schedule.describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise CliError(f'no schedule "{args.schedule_id}" exists', 1) from None
        raise
    if args.action == "describe":
        out(json.dumps((await schedule.describe()).to_wire(), indent=2))
    elif args.action == "pause":
        await schedule.pause(args.note)
        out(f"schedule {schedule.id} paused")
    elif args.action == "unpause":
        await schedule.unpause(args.note)
        out(f"schedule {schedule.id} unpaused")
    elif args.action == "trigger":
        await schedule.trigger()
        out(f"schedule {schedule.id} triggered")
    else:
        await schedule.delete()
        out(f"schedule {schedule.id} deleted")
    return 0
