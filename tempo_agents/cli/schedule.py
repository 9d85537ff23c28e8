"""The ``schedule`` command: create, list, describe, update, pause, unpause, trigger, backfill and delete an App's
schedules."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.cli._console import CliError, out
from tempo_agents.cli._options import add_app_options, add_server_options, connection_options
from tempo_agents.cli.app_loading import configure_app, connect, load_app
from tempo_agents.client.app import App
from tempo_agents.errors import ConfigurationError
from tempo_agents.schedules import (
    OVERLAP_POLICIES,
    AgentSchedule,
    ScheduleChanges,
    ScheduleRequest,
    ScheduleView,
    create_schedule,
)

__all__ = ["add_command", "cmd_schedule"]

_CLEAR = "-"
"""Given to an option of ``update``, clears it (back to the agent's default)."""


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not JSON: {text}") from None


def _strict_int(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number: {text}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text}")
    return value


def _approval(text: str) -> bool | str:
    return {"true": True, "false": False}.get(text.lower(), text)


def _add_run_options(parser: argparse.ArgumentParser, *, clearable: bool) -> None:
    """The run options of ``App.schedule``, one flag each (on ``update``, ``-`` clears a text option)."""
    clear = f" ({_CLEAR} clears it)" if clearable else ""
    parser.add_argument("--thread", metavar="ID", help=f"memory thread of the runs (with --resource){clear}")
    parser.add_argument("--resource", metavar="ID", help="memory resource of the runs (with --thread)")
    parser.add_argument("--max-steps", type=_strict_int, metavar="N", help="model steps per run at most")
    parser.add_argument("--budget", type=_json, metavar="JSON", help='limits, e.g. \'{"run": {"tokens": 20000}}\'')
    parser.add_argument("--request-context", type=_json, metavar="JSON", help="the runs' request context (object)")
    parser.add_argument("--model-settings", type=_json, metavar="JSON", help="e.g. '{\"temperature\": 0.2}'")
    parser.add_argument("--tool-choice", metavar="CHOICE", help="auto, none, required or a tool name")
    parser.add_argument("--active-tool", action="append", metavar="TOOL", help="a tool the runs may call (repeat)")
    parser.add_argument("--hooks", metavar="NAME", help=f"hooks registered on the App{clear}")
    parser.add_argument(
        "--require-tool-approval", type=_approval, metavar="true|false|POLICY", help="approval of every call"
    )
    parser.add_argument("--auto-resume", choices=("true", "false"), help="the next message resumes a waiting call")
    parser.add_argument("--mode", help=f"the agent mode the runs start in{clear}")
    parser.add_argument("--instructions", help=f"added to the agent's instructions{clear}")
    parser.add_argument("--remind-every", type=_seconds, metavar="SECONDS", help="reminders of waiting calls")
    parser.add_argument("--escalate-after", type=_seconds, metavar="SECONDS", help="escalation of waiting calls")
    parser.add_argument("--escalate-to", action="append", metavar="WHO", help="who a waiting call escalates to")


def _run_option_fields(args: argparse.Namespace) -> dict[str, Any]:
    given: dict[str, Any] = {
        "thread": args.thread,
        "resource": args.resource,
        "max_steps": args.max_steps,
        "budget": args.budget,
        "request_context": args.request_context,
        "model_settings": args.model_settings,
        "tool_choice": args.tool_choice,
        "active_tools": args.active_tool,
        "hooks": args.hooks,
        "require_tool_approval": args.require_tool_approval,
        "auto_resume_suspended_tools": None if args.auto_resume is None else args.auto_resume == "true",
        "mode": args.mode,
        "extra_instructions": args.instructions,
        "remind_every_seconds": args.remind_every,
        "escalate_after_seconds": args.escalate_after,
        "escalate_to": args.escalate_to,
    }
    fields = {name: value for name, value in given.items() if value is not None}
    for name, value in list(fields.items()):
        if value == _CLEAR:
            fields[name] = None
    if fields.get("thread", "") is None:  # clearing the thread clears the memory
        fields["resource"] = None
    return fields


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``schedule`` and its sub-commands."""
    schedule = commands.add_parser(
        "schedule",
        help="runs of an agent on a Temporal Schedule: create, list, update, trigger, backfill, pause, delete",
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
    create.add_argument("--paused", action="store_true", help="create it paused")
    create.add_argument("--note", help="a note kept with the schedule")
    _add_run_options(create, clearable=False)

    update = actions.add_parser(
        "update",
        help="change a schedule in place (its recent runs stay)",
        description=f"Change a schedule in place: only what is given changes; {_CLEAR} clears a text option.",
    )
    update.add_argument("schedule_id", metavar="ID", help="the schedule's id")
    update.add_argument("--message", help="the user message of every run")
    spec = update.add_mutually_exclusive_group()
    spec.add_argument("--cron", metavar="EXPR", help="run on this cron instead")
    spec.add_argument("--every", metavar="DURATION", help="run at this interval instead")
    update.add_argument("--time-zone", metavar="IANA", help=f"the cron's time zone ({_CLEAR}: UTC)")
    update.add_argument("--jitter", metavar="DURATION", help=f"delay each run by up to this much ({_CLEAR}: none)")
    update.add_argument("--overlap", choices=sorted(OVERLAP_POLICIES))
    update.add_argument("--catchup-window", metavar="DURATION", help=f"how late a missed run may start ({_CLEAR})")
    update.add_argument("--note", help=f"a note kept with the schedule ({_CLEAR} clears it)")
    _add_run_options(update, clearable=True)

    backfill = actions.add_parser(
        "backfill", help="start the runs that were due in a past period", description="Start the runs due in a period."
    )
    backfill.add_argument("schedule_id", metavar="ID", help="the schedule's id")
    backfill.add_argument("--start", required=True, type=datetime.fromisoformat, metavar="ISO", help="from (included)")
    backfill.add_argument("--end", required=True, type=datetime.fromisoformat, metavar="ISO", help="to (included)")
    backfill.add_argument("--overlap", choices=sorted(OVERLAP_POLICIES), help="default: the schedule's")

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
        if name == "trigger":
            action.add_argument("--overlap", choices=sorted(OVERLAP_POLICIES), help="default: the schedule's")
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


def _invalid(error: ValidationError) -> CliError:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return CliError(f"{where}: {first['msg']}", 2)


async def _create(app: App, args: argparse.Namespace) -> None:
    try:
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
            **_run_option_fields(args),
        )
        schedule = await create_schedule(
            app,
            request.agent_id,
            request.message,
            cron=request.cron,
            every=request.every,
            schedule_id=request.schedule_id,
            time_zone=request.time_zone,
            jitter=request.jitter,
            overlap=request.overlap,
            catchup_window=request.catchup_window,
            paused=request.paused,
            note=request.note,
            options=request.run_options(),
        )
    except ValidationError as error:
        raise _invalid(error) from None
    out(f"schedule {schedule.id} created")
    out(_line(await schedule.describe()))


def _changes(args: argparse.Namespace) -> dict[str, Any]:
    given = {
        "message": args.message,
        "cron": args.cron,
        "every": args.every,
        "time_zone": args.time_zone,
        "jitter": args.jitter,
        "overlap": args.overlap,
        "catchup_window": args.catchup_window,
        "note": args.note,
    }
    fields = {name: (None if value == _CLEAR else value) for name, value in given.items() if value is not None}
    try:
        return ScheduleChanges(**fields, **_run_option_fields(args)).changes()
    except ValidationError as error:
        raise _invalid(error) from None


async def cmd_schedule(args: argparse.Namespace) -> int:
    app: App = configure_app(
        load_app(args.app), store=args.store, task_queue=args.task_queue, notifications=args.notifications
    )
    await connect(app, args.address, args.namespace, **connection_options(args))
    try:
        return await _act(app, args)
    except ConfigurationError as error:
        raise CliError(error.message, 2) from None
    except ValidationError as error:
        raise _invalid(error) from None


async def _act(app: App, args: argparse.Namespace) -> int:
    if args.action == "create":
        await _create(app, args)
    elif args.action == "list":
        await _list(app)
    else:
        await _on_one_schedule(app, args)
    return 0


async def _list(app: App) -> None:
    views = await app.list_schedules()
    for view in views:
        out(_line(view))
    if not views:
        out("no schedules")


async def _existing(app: App, schedule_id: str) -> AgentSchedule:
    """The schedule named ``schedule_id``, which must exist."""
    schedule = app.get_schedule(schedule_id)
    try:
        await schedule.handle.describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise CliError(f'no schedule "{schedule_id}" exists', 1) from None
        raise
    return schedule


async def _on_one_schedule(app: App, args: argparse.Namespace) -> None:
    """An action on one schedule: describe, update, pause, unpause, trigger, backfill or delete."""
    changes = _changes(args) if args.action == "update" else {}
    if args.action == "update" and not changes:
        raise CliError("nothing to change: give at least one option", 2)
    schedule = await _existing(app, args.schedule_id)
    if args.action == "describe":
        out(json.dumps((await schedule.describe()).to_wire(), indent=2))
    elif args.action == "update":
        view = await schedule.update(**changes)
        out(f"schedule {schedule.id} updated")
        out(_line(view))
    elif args.action == "pause":
        await schedule.pause(args.note)
        out(f"schedule {schedule.id} paused")
    elif args.action == "unpause":
        await schedule.unpause(args.note)
        out(f"schedule {schedule.id} unpaused")
    elif args.action == "trigger":
        await _trigger(schedule, args.overlap)
    elif args.action == "backfill":
        await schedule.backfill(args.start, args.end, overlap=args.overlap)
        out(f"schedule {schedule.id} backfilled from {args.start.isoformat()} to {args.end.isoformat()}")
    else:
        await schedule.delete()
        out(f"schedule {schedule.id} deleted")


async def _trigger(schedule: AgentSchedule, overlap: str | None) -> None:
    triggered = await schedule.trigger(overlap=overlap)
    if triggered.run_id is not None:
        out(f"schedule {schedule.id} triggered: run {triggered.run_id} started")
    else:
        out(f"schedule {schedule.id} triggered (overlap {triggered.overlap}: its policy decides)")
