"""``tempo-agents api schedule``: an App's schedules over its HTTP API (list, show, create, update, trigger,
backfill, pause, unpause, delete), with the bodies ``/api/schedules`` takes."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tempo_agents.cli.api.client import ApiClient, ApiCommandError, Command
from tempo_agents.cli.api.output import Output, table

__all__ = ["add_schedule_group"]


def add_schedule_group(groups: argparse._SubParsersAction[argparse.ArgumentParser], command: Command) -> None:
    """Register ``api schedule`` and its actions (``command`` makes one action of a group)."""
    schedule = groups.add_parser("schedule", help="an App's schedules of runs").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    command(schedule, "list", _list, "every schedule, its next and latest run")
    command(schedule, "show", _show, "one schedule").add_argument("schedule_id", metavar="ID")
    create = command(schedule, "create", _create, "create a schedule of runs of an agent")
    create.add_argument("agent_id", metavar="AGENT")
    create.add_argument("message", metavar="MESSAGE")
    spec = create.add_mutually_exclusive_group(required=True)
    spec.add_argument("--cron", metavar="EXPR", help="a cron expression, e.g. '0 9 * * 1-5'")
    spec.add_argument("--every", metavar="DURATION", help="an interval: 30s, 15m, 1h30m, 7d")
    create.add_argument("--id", dest="schedule_id", metavar="ID", help="the schedule's id")
    create.add_argument(
        "--overlap", help="skip (default), buffer_one, buffer_all, cancel_other, terminate_other, allow_all"
    )
    create.add_argument(
        "--with",
        dest="extra",
        metavar="JSON",
        help='more fields of the body, e.g. \'{"maxSteps": 4, "budget": {...}}\'',
    )
    update = command(schedule, "update", _update, "change a schedule in place (its runs stay)")
    update.add_argument("schedule_id", metavar="ID")
    update.add_argument("changes", nargs="?", metavar="JSON", help='e.g. \'{"cron": "0 9 * * 1-5", "maxSteps": null}\'')
    trigger = command(schedule, "trigger", _trigger, "start a run now")
    trigger.add_argument("schedule_id", metavar="ID")
    trigger.add_argument("--overlap", help="this trigger's overlap policy (default: the schedule's)")
    backfill = command(schedule, "backfill", _backfill, "start the runs that were due in a past period")
    backfill.add_argument("schedule_id", metavar="ID")
    backfill.add_argument("--start", required=True, metavar="ISO", help="from (included), with a time zone")
    backfill.add_argument("--end", required=True, metavar="ISO", help="to (included), with a time zone")
    backfill.add_argument("--overlap", help="the backfill's overlap policy (default: the schedule's)")
    for name, handler, text in (
        ("pause", _pause, "start no more runs until unpaused"),
        ("unpause", _unpause, "start runs again"),
        ("delete", _delete, "delete the schedule (its runs stay)"),
    ):
        command(schedule, name, handler, text).add_argument("schedule_id", metavar="ID")


def _object(text: str | None, what: str) -> dict[str, Any]:
    if text is None:
        raise ApiCommandError("MISSING_INPUT", f"Command requires {what} as one inline JSON object")
    try:
        value = json.loads(text)
    except ValueError:
        raise ApiCommandError("INVALID_JSON", "Input must be valid JSON") from None
    if not isinstance(value, dict):
        raise ApiCommandError("INVALID_JSON", "Input JSON must be an object")
    return value


def _path(schedule_id: str, action: str = "") -> str:
    return f"schedules/{schedule_id}" + (f"/{action}" if action else "")


def _line(view: dict[str, Any]) -> list[str]:
    when = ", ".join(view.get("cron") or []) or ", ".join(f"every {s:g}s" for s in view.get("everySeconds") or [])
    recent = view.get("recentRuns") or []
    return [
        view["id"],
        view.get("agentId") or "",
        when,
        "paused" if view.get("paused") else "active",
        str(view.get("runsStarted", 0)),
        recent[-1]["runId"] if recent else "-",
    ]


def _readable(view: dict[str, Any]) -> str:
    return table([_line(view)], ["ID", "AGENT", "WHEN", "STATE", "RUNS", "LAST"])


async def _list(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    views = await client.request("GET", "schedules")
    output.result(views, lambda d: table([_line(v) for v in d], ["ID", "AGENT", "WHEN", "STATE", "RUNS", "LAST"]))
    return 0


async def _show(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    output.result(await client.request("GET", _path(args.schedule_id)), lambda d: json.dumps(d, indent=2))
    return 0


async def _create(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    body: dict[str, Any] = _object(args.extra, "--with") if args.extra is not None else {}
    body.update(agentId=args.agent_id, message=args.message)
    for field, value in (("cron", args.cron), ("every", args.every), ("scheduleId", args.schedule_id),
                         ("overlap", args.overlap)):  # fmt: skip
        if value is not None:
            body[field] = value
    output.result(await client.request("POST", "schedules", json_body=body), _readable)
    return 0


async def _update(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    changes = _object(args.changes, "the changes")
    output.result(await client.request("PATCH", _path(args.schedule_id), json_body=changes), _readable)
    return 0


async def _trigger(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    body = {"overlap": args.overlap} if args.overlap else {}
    answer = await client.request("POST", _path(args.schedule_id, "trigger"), json_body=body)
    output.result(
        answer,
        lambda d: (
            f"run {d['runId']} started"
            if d.get("runId")
            else f"triggered (overlap {d.get('overlap')}: the schedule's policy decides)"
        ),
    )
    return 0


async def _backfill(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    body = {"startAt": args.start, "endAt": args.end, **({"overlap": args.overlap} if args.overlap else {})}
    answer = await client.request("POST", _path(args.schedule_id, "backfill"), json_body=body)
    output.result(answer, lambda d: f"backfilled {d['scheduleId']} from {d['startAt']} to {d['endAt']}")
    return 0


async def _pause(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    output.result(await client.request("POST", _path(args.schedule_id, "pause")), _readable)
    return 0


async def _unpause(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    output.result(await client.request("POST", _path(args.schedule_id, "unpause")), _readable)
    return 0


async def _delete(client: ApiClient, args: argparse.Namespace, output: Output) -> int:
    await client.request("DELETE", _path(args.schedule_id))
    output.result({"scheduleId": args.schedule_id, "deleted": True}, lambda d: f"deleted {d['scheduleId']}")
    return 0
