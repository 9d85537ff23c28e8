"""Schedules: Temporal schedules that start an agent's runs, their requests, views and cron helpers."""

from tempo_agents.schedules.handles import (
    AgentSchedule,
    BackfillOverlapError,
    ScheduledRun,
    ScheduleView,
    TriggeredRun,
)
from tempo_agents.schedules.requests import ScheduleChanges, ScheduleRequest, ScheduleRunOptions

__all__ = [
    "AgentSchedule",
    "BackfillOverlapError",
    "ScheduleChanges",
    "ScheduleRequest",
    "ScheduleRunOptions",
    "ScheduleView",
    "ScheduledRun",
    "TriggeredRun",
]
