"""Schedules of the App's agents (ours, not the reference's): create, list, describe, update, pause, unpause,
trigger, backfill, delete. Each is a Temporal Schedule whose runs are ordinary runs (``schedules/handles.py``)."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from typing import Any, TypeVar

from fastapi import APIRouter, Request, Response
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictStr, ValidationError
from pydantic.alias_generators import to_camel
from temporalio.client import ScheduleAlreadyRunningError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.client.app import App
from tempo_agents.schedules import (
    AgentSchedule,
    BackfillOverlapError,
    ScheduleChanges,
    ScheduleRequest,
    create_schedule,
)
from tempo_agents.server.access.hidden import is_hidden
from tempo_agents.server.access.tenants import memory_resource
from tempo_agents.server.access.visibility import visible_tenants
from tempo_agents.server.dependencies import PRINTABLE, AppDep, find_agent
from tempo_agents.server.errors import ApiError

__all__ = ["router"]

router = APIRouter(prefix="/schedules", tags=["schedules"])

_T = TypeVar("_T")

_STRICT = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class ScheduleBody(ScheduleRequest):
    """A new schedule: the agent, its message, ``cron`` or ``every``, and the run options of its runs."""

    model_config = _STRICT

    agent_id: StrictStr = Field(pattern=PRINTABLE, min_length=1)
    message: StrictStr | list[dict[str, Any]] = Field(min_length=1)
    every: StrictStr | None = Field(default=None, description="30s, 15m, 1h30m, 7d")
    schedule_id: StrictStr | None = Field(default=None, pattern=r"^[A-Za-z0-9._:~-]{1,200}$")
    thread: StrictStr | None = Field(default=None, pattern=PRINTABLE)
    resource: StrictStr | None = Field(default=None, pattern=PRINTABLE)


class ScheduleChangesBody(ScheduleChanges):
    """Changes to a schedule: only the fields given change (``null`` clears an option); its runs and id stay."""

    model_config = _STRICT

    message: StrictStr | list[dict[str, Any]] | None = Field(default=None, min_length=1)
    every: StrictStr | None = Field(default=None, description="30s, 15m, 1h30m, 7d (replaces cron)")
    thread: StrictStr | None = Field(default=None, pattern=PRINTABLE)
    resource: StrictStr | None = Field(default=None, pattern=PRINTABLE)


class NoteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note: StrictStr | None = None


class TriggerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    overlap: StrictStr | None = Field(
        default=None, description="this trigger's overlap policy (default: the schedule's)"
    )


class BackfillBody(BaseModel):
    """The runs due between ``startAt`` and ``endAt`` (both included, ISO 8601 with a time zone)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    start_at: AwareDatetime
    end_at: AwareDatetime
    overlap: StrictStr | None = Field(default=None, description="its overlap policy (default: the schedule's)")


async def _checked(call: Awaitable[_T]) -> _T:
    """Await a change; the App's checks and the server's refusals are the caller's 400."""
    try:
        return await call
    except ValidationError as error:
        issues = [{"field": ".".join(str(p) for p in e["loc"]) or "root", "message": e["msg"]} for e in error.errors()]
        raise ApiError(400, "Invalid request body", issues=issues) from None
    except RPCError as error:
        if error.status == RPCStatusCode.INVALID_ARGUMENT:
            raise ApiError(400, error.message) from None
        raise
    except ValueError as error:  # the SDK's own checks of the spec
        raise ApiError(400, str(error)) from None


async def _existing(app: App, schedule_id: str) -> AgentSchedule:
    schedule = app.get_schedule(schedule_id)
    if is_hidden(schedule_id):  # another tenant's
        raise ApiError(404, f"Schedule with id {schedule_id} not found")
    try:
        view = await schedule.describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise ApiError(404, f"Schedule with id {schedule_id} not found") from None
        raise
    if view.agent_id is None:
        raise ApiError(404, f"Schedule with id {schedule_id} not found")
    return schedule


@router.post("", summary="Create a schedule of runs of an agent", status_code=201)
async def create(app: AppDep, body: ScheduleBody) -> dict[str, Any]:
    find_agent(app, body.agent_id)
    options = body.run_options()
    try:
        schedule = await _checked(
            create_schedule(
                app,
                body.agent_id,
                body.message,
                cron=body.cron,
                every=body.every,
                schedule_id=body.schedule_id,
                time_zone=body.time_zone,
                jitter=body.jitter,
                overlap=body.overlap,
                catchup_window=body.catchup_window,
                paused=body.paused,
                note=body.note,
                options=options,
            )
        )
    except ScheduleAlreadyRunningError:
        raise ApiError(409, f"Schedule with id {body.schedule_id} already exists") from None
    return (await schedule.describe()).to_wire()


@router.get("", summary="The App's schedules with their next and recent runs")
async def list_all(app: AppDep, request: Request) -> list[dict[str, Any]]:
    tenants = visible_tenants(request)
    views = await app.list_schedules()
    return [
        view.to_wire() for view in views if tenants is None or memory_resource(view.options.get("memory")) in tenants
    ]


@router.get("/{schedule_id}", summary="A schedule: spec, state, its runs' message and options, next and recent runs")
async def describe(app: AppDep, schedule_id: str) -> dict[str, Any]:
    return (await (await _existing(app, schedule_id)).describe()).to_wire()


@router.patch("/{schedule_id}", summary="Change a schedule in place (its recent runs and id stay)")
async def update(app: AppDep, schedule_id: str, body: ScheduleChangesBody) -> dict[str, Any]:
    schedule = await _existing(app, schedule_id)
    changes = body.changes()
    if not changes:
        raise ApiError(400, "nothing to change: name at least one field")
    return (await _checked(schedule.update(**changes))).to_wire()


@router.post("/{schedule_id}/pause", summary="Start no more runs until unpaused")
async def pause(app: AppDep, schedule_id: str, body: NoteBody | None = None) -> dict[str, Any]:
    schedule = await _existing(app, schedule_id)
    await schedule.pause(body.note if body else None)
    return (await schedule.describe()).to_wire()


@router.post("/{schedule_id}/unpause", summary="Start runs again as the spec says")
async def unpause(app: AppDep, schedule_id: str, body: NoteBody | None = None) -> dict[str, Any]:
    schedule = await _existing(app, schedule_id)
    await schedule.unpause(body.note if body else None)
    return (await schedule.describe()).to_wire()


@router.post(
    "/{schedule_id}/trigger",
    summary="Start a run now",
    status_code=202,
    description=(
        "Under the overlap policy allow_all every trigger starts a run of its own, named in the answer "
        "(`started: true`, `runId`); under the other policies the schedule decides as its policy says "
        "(`started: null`)."
    ),
)
async def trigger(app: AppDep, schedule_id: str, body: TriggerBody | None = None) -> dict[str, Any]:
    schedule = await _existing(app, schedule_id)
    triggered = await _checked(schedule.trigger(overlap=body.overlap if body else None))
    return {"triggered": True, **triggered.model_dump(mode="json", by_alias=True)}


@router.post(
    "/{schedule_id}/backfill",
    summary="Start the runs that were due in a past period",
    status_code=202,
    description="One run per due time; a period in which the schedule already has runs is a 409 naming them.",
)
async def backfill(app: AppDep, schedule_id: str, body: BackfillBody) -> dict[str, Any]:
    schedule = await _existing(app, schedule_id)
    try:
        await _checked(schedule.backfill(body.start_at, body.end_at, overlap=body.overlap))
    except BackfillOverlapError as error:
        raise ApiError(409, error.message) from None
    return {
        "scheduleId": schedule.id,
        "backfilled": True,
        "startAt": _iso(body.start_at),
        "endAt": _iso(body.end_at),
    }


def _iso(at: datetime) -> str:
    return at.isoformat()


@router.delete("/{schedule_id}", summary="Delete a schedule (its runs stay)", status_code=204)
async def delete(app: AppDep, schedule_id: str) -> Response:
    await (await _existing(app, schedule_id)).delete()
    return Response(status_code=204)
