"""Waiting for Temporal to list a new schedule: it lists schedules from its visibility store, a moment after each is
created, so a list of schedules (or an erasure of their resource) right after a creation could miss it."""

from __future__ import annotations

import asyncio
import logging

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.workflows.visibility_queries import quote

__all__ = ["LISTING_WAIT_SECONDS", "until_listed"]

LISTING_WAIT_SECONDS = 30.0
"""How long creating a schedule waits at most for Temporal to list it."""
_LISTING_POLL_SECONDS = 0.05

_log = logging.getLogger(__name__)


async def until_listed(client: Client, schedule_id: str) -> None:
    """Return once Temporal lists the schedule (it lists schedules from its visibility store, a moment after they are
    created), so that a list or an erasure that follows its creation finds it; give up with a warning after
    ``LISTING_WAIT_SECONDS``, the schedule being created all the same. It asks for the schedule by id, or, of a
    server that cannot filter schedules so, looks through them all."""
    deadline = asyncio.get_running_loop().time() + LISTING_WAIT_SECONDS
    query: str | None = f"ScheduleId = {quote(schedule_id)}"
    while True:
        try:
            if any([listed.id == schedule_id async for listed in await client.list_schedules(query)]):
                return
        except RPCError as error:
            if error.status != RPCStatusCode.INVALID_ARGUMENT or query is None:
                raise
            query = None  # a server that cannot filter schedules by id: look through them all
            continue
        if asyncio.get_running_loop().time() >= deadline:
            _log.warning("Temporal does not list the schedule %r yet; a list of schedules may miss it", schedule_id)
            return
        await asyncio.sleep(_LISTING_POLL_SECONDS)
