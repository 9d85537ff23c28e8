"""A schedule's runs as the tests wait for them: the ids of its ended runs from visibility, and its view once it lists
its recent runs (both show a run a moment after it starts or ends)."""

from __future__ import annotations

import asyncio

from temporalio.client import Client

from tempo_agents.schedules.handles import AgentSchedule, ScheduleView

__all__ = ["QUIET_EVERY", "QUIET_EVERY_SECONDS", "closed_scheduled_runs", "view_with_recent_runs"]

QUIET_EVERY = "7d"
"""The interval of a schedule that a test runs by triggering it and counts the runs of. Temporal runs an interval
schedule at the multiples of its interval since the epoch: an hourly one at every full hour, so a test that met one
counted a run it did not trigger (seen in CI). A week's multiples fall on Thursdays at 00:00 UTC."""

QUIET_EVERY_SECONDS = 7 * 86400.0


async def closed_scheduled_runs(client: Client, schedule_id: str, count: int) -> list[str]:
    """The ids of the schedule's runs that have ended (``TemporalScheduledById``), once there are ``count`` of them."""
    query = f"TemporalScheduledById = '{schedule_id}' AND ExecutionStatus != 'Running'"
    while len(runs := [execution.id async for execution in client.list_workflows(query)]) < count:
        await asyncio.sleep(0.2)
    return runs


async def view_with_recent_runs(schedule: AgentSchedule, count: int) -> ScheduleView:
    """The schedule's view once it lists ``count`` recent runs."""
    while len((view := await schedule.describe()).recent_runs) < count:
        await asyncio.sleep(0.1)
    return view
