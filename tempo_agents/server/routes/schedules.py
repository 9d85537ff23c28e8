"""Schedules of the App's agents (ours, not the reference's): create, list, describe, pause, unpause, trigger,
delete. Each is a Temporal Schedule whose runs are ordinary runs (``agent/schedules.py``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from temporalio.client import ScheduleAlreadyRunningError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.agent.app import App
from tempo_agents.agent.schedules import AgentSchedule, ScheduleRequest
from tempo_agents.server.bodies import WholeNumber
from tempo_agents.server.dependencies import PRINTABLE, AppDep, find_agent
from tempo_agents.server.errors import ApiError

__all__ = ["router"]

router = APIRouter(prefix="/schedules", tags=["schedules"])


class ScheduleBody(ScheduleRequest):
    """A new schedule: the agent, its message, and ``cron`` or ``every``."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

    agent_id: str = Field(pattern=PRINTABLE, min_length=1)
    message: str | list[dict[str, Any]] = Field(min_length=1)
    every: str | None = Field(default=None, description="30s, 15m, 1h30m, 7d")
    schedule_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._:~-]{1,200}$")
    thread: str | None = Field(default=None, pattern=PRINTABLE)
    resource: str | None = Field(default=None, pattern=PRINTABLE)
    max_steps: WholeNumber | None = Field(default=None, ge=1)


class NoteBody(BaseModel):
    note: str | None = None


async def _existing(app: App, schedule_id: str) -> AgentSchedule:
    schedule = app.get_schedule(schedule_id)
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
    if (body.thread is None) != (body.resource is None):
        raise ApiError(400, "thread and resource go together: pass both or neither")
    try:
        schedule = await body.create(app)
    except ScheduleAlreadyRunningError:
        raise ApiError(409, f"Schedule with id {body.schedule_id} already exists") from None
    except RPCError as error:
        if error.status == RPCStatusCode.INVALID_ARGUMENT:
            raise ApiError(400, error.message) from None
        raise
    except ValueError as error:  # the SDK's own checks of the spec
        raise ApiError(400, str(error)) from None
    return (await schedule.describe()).to_wire()


@router.get("", summary="The App's schedules with their next and recent runs")
async def list_all(app: AppDep) -> list[dict[str, Any]]:
    return [view.to_wire() for view in await app.list_schedules()]


@router.get("/{schedule_id}", summary="A schedule: spec, state, next and recent runs")
async def describe(app: AppDep, schedule_id: str) -> dict[str, Any]:
    return (await (await _existing(app, schedule_id)).describe()).to_wire()


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


@router.post("/{schedule_id}/trigger", summary="Start a run now", status_code=202)
async def trigger(app: AppDep, schedule_id: str) -> dict[str, Any]:
    schedule = await _existing(app, schedule_id)
    await schedule.trigger()
    return {"scheduleId": schedule.id, "triggered": True}


@router.delete("/{schedule_id}", summary="Delete a schedule (its runs stay)", status_code=204)
async def delete(app: AppDep, schedule_id: str) -> Response:
    await (await _existing(app, schedule_id)).delete()
    return Response(status_code=204)
