"""A schedule's calendar specs written back as cron expressions.

The Temporal server keeps a cron given at creation or update as structured calendar specs, so what a schedule runs
on is read back from those: after an update (from here or from ``temporal schedule update``) the text is still true.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.client import ScheduleCalendarSpec, ScheduleRange

__all__ = ["calendar_cron"]

_FIELDS: tuple[tuple[str, int, int], ...] = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day_of_month", 1, 31),
    ("month", 1, 12),
    ("day_of_week", 0, 6),
)


def _field(ranges: Sequence[ScheduleRange], low: int, high: int) -> str:
    parts: list[str] = []
    for one in ranges:
        end = max(one.end, one.start)  # the server leaves end 0 for a single value
        step = max(one.step, 1)
        if one.start == low and end == high:
            parts.append("*" if step == 1 else f"*/{step}")
        elif one.start == end:
            parts.append(str(one.start))
        else:
            parts.append(f"{one.start}-{end}" + (f"/{step}" if step > 1 else ""))
    return ",".join(parts) or "*"


def calendar_cron(calendar: ScheduleCalendarSpec) -> str:
    """``"0 9 * * 1-5"`` for a calendar spec a cron became (a sixth, leading field when it names seconds)."""
    fields = [_field(getattr(calendar, name), low, high) for name, low, high in _FIELDS]
    seconds = _field(calendar.second, 0, 59)
    return " ".join([seconds, *fields] if seconds != "0" else fields)
