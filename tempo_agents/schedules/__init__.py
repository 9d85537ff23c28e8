"""Schedules: Temporal schedules that start an agent's runs, their requests, views and cron helpers."""

from tempo_agents.schedules.handles import (
    OVERLAP_POLICIES,
    SCHEDULE_MEMO,
    SCHEDULED_BY,
    AgentSchedule,
    BackfillOverlapError,
    ScheduledRun,
    ScheduleView,
    SchedulingApp,
    TriggeredRun,
    create_schedule,
    list_schedules,
)
from tempo_agents.schedules.requests import ScheduleChanges, ScheduleRequest, ScheduleRunOptions

__all__ = [
    "OVERLAP_POLICIES",
    "SCHEDULED_BY",
    "SCHEDULE_MEMO",
    "AgentSchedule",
    "BackfillOverlapError",
    "ScheduleChanges",
    "ScheduleRequest",
    "ScheduleRunOptions",
    "ScheduleView",
    "ScheduledRun",
    "SchedulingApp",
    "TriggeredRun",
    "create_schedule",
    "list_schedules",
]
