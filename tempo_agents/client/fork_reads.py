"""What the client reads about forks: the runs forked from a run, where a run was forked from, and two runs
compared side by side (``App.list_forks``, ``App.fork_origin``, ``App.compare``)."""

from __future__ import annotations

from typing import Any, Protocol

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.client.forking import FORK_MEMO, forks_query
from tempo_agents.errors import RunNotFoundError
from tempo_agents.forks import compare_runs
from tempo_agents.store.base import Store

__all__ = ["ComparingApp", "compared_runs", "fork_origin", "forks_of"]


class ComparingApp(Protocol):
    """What comparing runs needs of an App: its store (the transcripts) and its client (the workflows)."""

    @property
    def client(self) -> Client: ...

    @property
    def store(self) -> Store: ...


async def forks_of(client: Client, task_queue: str, run_id: str) -> list[str]:
    """The ids of the runs forked from ``run_id`` (visibility: ``TempoAgentForkOf``), newest first."""
    return [execution.id async for execution in client.list_workflows(forks_query(task_queue, run_id))]


async def fork_origin(client: Client, run_id: str) -> dict[str, Any] | None:
    """Where ``run_id`` was forked from (``{"runId", "step"}``, from its memo), or ``None``."""
    description = await client.get_workflow_handle(run_id).describe()
    origin = (await description.memo()).get(FORK_MEMO)
    return origin if isinstance(origin, dict) else None


async def compared_runs(app: ComparingApp, a: str, b: str) -> dict[str, Any]:
    """Runs ``a`` and ``b`` compared step by step (``forks.compare``), each with when it started and closed, how long
    it took and where it was forked from (its workflow's description and memo)."""
    compared = await compare_runs(app.store, a, b)
    for side, run_id in (("a", a), ("b", b)):
        try:
            description = await app.client.get_workflow_handle(run_id).describe()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                raise RunNotFoundError(f'no run "{run_id}" exists') from error
            raise
        started, closed = description.start_time, description.close_time
        origin = (await description.memo()).get(FORK_MEMO)
        compared[side].update(
            startedAt=started.isoformat() if started else None,
            closedAt=closed.isoformat() if closed else None,
            durationMs=round((closed - started).total_seconds() * 1000) if started and closed else None,
            forkOf=origin if isinstance(origin, dict) else None,
        )
    return compared
