"""The retention sweeper: a worker's background task that deletes closed runs' records once they expire.

Each sweep first notes the runs closed since the last one (Temporal's visibility: closed runs of the App's task queue,
with their agent, resource and close time) and records when each expires under the :class:`Retention`; then deletes
the expired ones in batches (the store's rows, then the execution in Temporal if it is still there), pausing between
batches so live runs keep the store. Expiries live in the store, so a run whose history Temporal's namespace retention
removed first still has its records deleted when they expire. Several workers sweeping at once delete the same runs
harmlessly."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from temporalio.client import Client

from tempo_agents.notifications import delivery_workflow_id
from tempo_agents.retention.executions import delete_execution
from tempo_agents.retention.policy import Retention
from tempo_agents.store.base import Store
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.visibility_queries import quote, runs_query

__all__ = ["VISIBILITY_LAG_SECONDS", "RetentionSweeper", "SweepResult", "sweeping"]

VISIBILITY_LAG_SECONDS = 300.0
"""How far back each sweep reads closed runs again: a run closed just before the last sweep may be listed by
Temporal's visibility only after it (noting a run twice is harmless)."""

_CLOSED = "'Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'"
"""A run's final statuses: an execution that continued as new is not one (the run goes on under the same id)."""

log = logging.getLogger("tempo_agents.retention")


@dataclass(frozen=True)
class SweepResult:
    """What one sweep did: runs whose expiry it noted, and runs whose records it deleted."""

    noted: int
    deleted: list[str]


class RetentionSweeper:
    """Sweeps one App's closed runs (its ``task_queue``) under ``retention``."""

    def __init__(
        self,
        client: Client,
        store: Store,
        task_queue: str,
        retention: Retention,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.store = store
        self.task_queue = task_queue
        self.retention = retention
        self.clock = clock

    async def sweep(self) -> SweepResult:
        """One sweep: note newly closed runs, then delete every expired one, a batch at a time."""
        now = self.clock()
        noted = await self._note_closed_runs(now)
        deleted: list[str] = []
        while batch := await self.store.expired_runs(now, self.retention.batch):
            await self.store.erase(batch, refuse_later_writes=False)  # closed runs: nothing of theirs writes later
            for run_id in batch:
                await delete_execution(self.client, run_id)
                await delete_execution(self.client, delivery_workflow_id(run_id))  # its notifications' workflow
            await self.store.forget_expiries(batch)
            deleted += batch
            await asyncio.sleep(self.retention.pause.total_seconds())
        return SweepResult(noted, deleted)

    async def _note_closed_runs(self, now: float) -> int:
        mark = await self.store.retention_mark(self.task_queue)
        clauses = [f"ExecutionStatus IN ({_CLOSED})"]
        if mark is not None:
            clauses.append(f"CloseTime >= {quote(datetime.fromtimestamp(mark, UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ'))}")
        query = runs_query(self.task_queue, clauses=clauses)
        expiries: list[tuple[str, float]] = []
        async for run in self.client.list_workflows(query):
            if run.close_time is None:
                continue
            attributes = run.typed_search_attributes
            expiry = self.retention.expires_at(
                attributes.get(search_attributes.AGENT_ID),
                attributes.get(search_attributes.RESOURCE_ID),
                run.close_time.timestamp(),
            )
            if expiry is not None:
                expiries.append((run.id, expiry))
        await self.store.set_expiries(expiries)
        await self.store.set_retention_mark(self.task_queue, now - VISIBILITY_LAG_SECONDS)
        return len(expiries)


@asynccontextmanager
async def sweeping(sweeper: RetentionSweeper) -> AsyncIterator[None]:
    """Sweep every ``retention.every`` while the block runs (a worker's run context); a failed sweep is logged and
    tried again at the next interval, never stopping the worker."""

    async def loop() -> None:
        while True:
            try:
                result = await sweeper.sweep()
                if result.deleted:
                    log.info("retention: deleted the records of %d expired runs", len(result.deleted))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("retention: a sweep failed; the next one tries again")
            await asyncio.sleep(sweeper.retention.every.total_seconds())

    task = asyncio.create_task(loop(), name="tempo-agents retention sweeper")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
