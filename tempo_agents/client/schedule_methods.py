"""The App's schedules: runs started by Temporal Schedules (ARCHITECTURE.md, "Runs not started by a person").

:class:`ScheduleMethods` is the part of :class:`App` that creates, finds, changes and lists them; the schedules
themselves are ``schedules/handles.py``'s.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Protocol

from tempo_agents.models.messages import MessageInput
from tempo_agents.schedules import AgentSchedule, ScheduleView, SchedulingApp, create_schedule, list_schedules

__all__ = ["ScheduleMethods", "ScheduleOwner"]


class ScheduleOwner(SchedulingApp, Protocol):
    """An App that finds its schedules by id."""

    def get_schedule(self, schedule_id: str) -> AgentSchedule: ...


class ScheduleMethods:
    """The App's schedule methods (``app.schedule(...)``, ``app.get_schedule(id)`` ...)."""

    async def schedule(
        self: SchedulingApp,
        agent_id: str,
        message: MessageInput,
        *,
        cron: str | None = None,
        every: str | timedelta | None = None,
        schedule_id: str | None = None,
        time_zone: str | None = None,
        jitter: str | timedelta | None = None,
        overlap: str = "skip",
        catchup_window: str | timedelta | None = None,
        paused: bool = False,
        note: str | None = None,
        **options: Any,
    ) -> AgentSchedule:
        """Run ``agent_id`` with ``message`` on a Temporal Schedule: ``cron="0 9 * * 1-5"`` or ``every="1h"``
        (``"30s"``, ``"1h30m"``, a ``timedelta``). Each run is an ordinary run with ``options`` (``memory``,
        ``max_steps``, ``budget`` ...) whose run id is ``<schedule id>-<scheduled time>`` (a trigger's:
        ``<schedule id>-<time>-<8 hex>``).

        ``time_zone`` (IANA name) is the cron's; ``jitter`` delays each run by up to that much; ``overlap``
        says what happens when a run is due while the last one has not closed (``skip``, ``buffer_one``,
        ``buffer_all``, ``cancel_other``, ``terminate_other``, ``allow_all``); ``catchup_window`` is how late
        a run missed while the Temporal server was down may still start. The schedule lives on the Temporal
        server: it survives restarts of workers, clients and the server itself."""
        return await create_schedule(
            self,
            agent_id,
            message,
            cron=cron,
            every=every,
            schedule_id=schedule_id,
            time_zone=time_zone,
            jitter=jitter,
            overlap=overlap,
            catchup_window=catchup_window,
            paused=paused,
            note=note,
            options=options,
        )

    def get_schedule(self: SchedulingApp, schedule_id: str) -> AgentSchedule:
        """A handle on an existing schedule (describe, update, pause, unpause, trigger, backfill, delete)."""
        return AgentSchedule(self, self.client.get_schedule_handle(schedule_id))

    async def update_schedule(self: ScheduleOwner, schedule_id: str, **changes: Any) -> ScheduleView:
        """Change a schedule in place, keeping its recent runs (:meth:`AgentSchedule.update`: ``message``, ``cron``
        or ``every``, ``time_zone``, ``jitter``, ``overlap``, ``catchup_window``, ``note``, ``paused``, and run
        options such as ``memory``, ``max_steps`` or ``budget``)."""
        return await self.get_schedule(schedule_id).update(**changes)

    async def list_schedules(self: SchedulingApp) -> list[ScheduleView]:
        """This App's schedules (on its task queue), with their next and recent runs."""
        return await list_schedules(self)
