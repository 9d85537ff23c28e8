"""Runs that wait for a person, read where their waits are journaled: the store.

A call's wait is kept in the store in the transaction that journals its ``tool-call-suspended`` /
``tool-call-approval`` chunk and dropped in the one that records its answer (or the end of its run), so a
listing made after a client read that chunk holds the run (read-your-writes), which Temporal visibility,
a moment behind its search attributes, cannot promise. Runs that suspended before the store kept waits (a
store upgraded while they waited) are found through visibility (``TempoAgentStatus``, which operators'
queries keep using) and listed after the store's; a listed run that visibility reports closed (terminated,
so no chunk ended its waits) is dropped, and its waits with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from temporalio.client import Client

from tempo_agents.agent.suspended_runs import SuspendedRun, SuspendedRuns, SuspendedToolCall
from tempo_agents.store.base import Resources, Store
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.payloads import PendingCall
from tempo_agents.workflows.visibility_queries import quote, runs_query, waiting_clauses

__all__ = ["WaitingPage", "WaitingRun", "WaitingRunsApp", "suspended_runs", "waiting_page"]

_CLOSED = "ExecutionStatus IN ('Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut')"


@dataclass(frozen=True)
class WaitingRun:
    """A run that waits for a person and the calls it waits on, oldest first."""

    run_id: str
    agent_id: str | None
    thread_id: str | None
    resource_id: str | None
    calls: list[PendingCall]

    @property
    def suspended_at(self) -> datetime | None:
        """When its first waiting call suspended."""
        return min((call.suspended_at for call in self.calls), default=None)


@dataclass(frozen=True)
class WaitingPage:
    """Waiting runs, the most recent suspension first, and how many there are in all."""

    runs: list[WaitingRun]
    total: int


async def _from_visibility(
    client: Client,
    store: Store,
    task_queue: str,
    agent_id: str | None,
    thread_id: str | None,
    resource_id: Resources,
) -> list[WaitingRun]:
    """Waiting runs that started before the store kept waits (none on a store that always did)."""
    since = datetime.fromtimestamp(await store.waiting_kept_since(), UTC)
    clauses = [*waiting_clauses(), f"StartTime < '{since.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}'"]
    query = runs_query(task_queue, agent_id=agent_id, thread_id=thread_id, resource_id=resource_id, clauses=clauses)
    found = []
    async for execution in client.list_workflows(query):
        memo = await execution.memo()
        pending = [PendingCall.model_validate(item) for item in memo.get("pending", [])]
        if not pending or max(_utc(call.suspended_at) for call in pending) >= since:
            continue  # a wait the store holds (or has dropped, being answered)
        attributes = execution.typed_search_attributes
        found.append(
            WaitingRun(
                run_id=execution.id,
                agent_id=attributes.get(search_attributes.AGENT_ID),
                thread_id=attributes.get(search_attributes.THREAD_ID),
                resource_id=attributes.get(search_attributes.RESOURCE_ID),
                calls=pending,
            )
        )
    found.sort(key=lambda run: run.suspended_at or since, reverse=True)
    return found


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def waiting_page(
    store: Store,
    client: Client,
    task_queue: str,
    *,
    agent_id: str | None = None,
    thread_id: str | None = None,
    resource_id: Resources = None,
    limit: int | None = None,
    skip: int = 0,
) -> WaitingPage:
    """Top runs of ``task_queue`` waiting for a person (sub-agents' waits are listed on their top run): ``skip``
    left out, at most ``limit`` (``None``: all)."""
    kept = await store.waiting_runs(
        task_queue, agent_id=agent_id, thread_id=thread_id, resource_id=resource_id, limit=limit, skip=skip
    )
    closed = await _closed(client, task_queue, [calls[0].run_id for calls in kept.runs])
    for calls in kept.runs:
        if calls[0].run_id in closed:  # ended with no chunk saying so (terminated): it waits no more
            for call in calls:
                await store.forget_waiting(call.run_id, call.tool_call_id, int(call.call.get("round", 0)))
    runs = [
        WaitingRun(
            run_id=calls[0].run_id,
            agent_id=calls[0].agent_id,
            thread_id=calls[0].thread_id,
            resource_id=calls[0].resource_id,
            calls=[PendingCall.model_validate(call.call) for call in calls],
        )
        for calls in kept.runs
        if calls[0].run_id not in closed
    ]
    older = await _from_visibility(client, store, task_queue, agent_id, thread_id, resource_id)
    if older and (limit is None or len(runs) < limit):
        start = max(skip - kept.total, 0)
        room = None if limit is None else limit - len(runs)
        runs.extend(older[start:] if room is None else older[start : start + room])
    return WaitingPage(runs=runs, total=kept.total - len(closed) + len(older))


_CLOSED_BATCH = 200
"""Run ids asked about in one visibility query: a listing of every waiting run (thousands) is asked in batches, so
no query grows with the number of waiting runs."""


async def _closed(client: Client, task_queue: str, run_ids: list[str]) -> set[str]:
    """Which of the runs have closed (visibility: a run that closed a moment ago may still look open; a run
    closes with its waits dropped unless it was terminated)."""
    closed: set[str] = set()
    for start in range(0, len(run_ids), _CLOSED_BATCH):
        ids = ", ".join(quote(run_id) for run_id in run_ids[start : start + _CLOSED_BATCH])
        query = runs_query(task_queue, clauses=[f"WorkflowId IN ({ids})", _CLOSED])
        closed |= {execution.id async for execution in client.list_workflows(query)}
    return closed


class WaitingRunsApp(Protocol):
    """What listing waiting runs needs of an App: its store, its client and its task queue."""

    task_queue: str

    @property
    def client(self) -> Client: ...

    @property
    def store(self) -> Store: ...


async def suspended_runs(
    app: WaitingRunsApp,
    *,
    agent_id: str | None = None,
    thread_id: str | None = None,
    resource_id: Resources = None,
    limit: int | None = None,
    offset: int = 0,
) -> SuspendedRuns:
    """A page of :func:`waiting_page` as ``App.list_suspended_runs`` answers it (``offset``: how many to skip)."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    if offset < 0:
        raise ValueError(f"offset must not be negative, not {offset}")
    page = await waiting_page(
        app.store,
        app.client,
        app.task_queue,
        agent_id=agent_id,
        thread_id=thread_id,
        resource_id=resource_id,
        limit=limit,
        skip=offset,
    )
    runs = [
        SuspendedRun(
            run_id=run.run_id,
            agent_id=run.agent_id,
            thread_id=run.thread_id,
            resource_id=run.resource_id,
            suspended_at=run.suspended_at,
            tool_calls=[
                SuspendedToolCall(
                    tool_call_id=p.tool_call_id,
                    tool_name=p.tool_name,
                    args=p.args,
                    requires_approval=p.requires_approval,
                    suspend_payload=p.suspend_payload,
                )
                for p in run.calls
            ],
        )
        for run in page.runs
    ]
    return SuspendedRuns(runs=runs, total=page.total)
