"""Erasing a scope: its schedules, its executions in Temporal (running ones stopped as they go), its rows in the store.

The order keeps anything new from appearing while it works: schedules first (no new runs start), then the running
threads' workflows, once their histories say which runs they hold (no queued run starts; one that started since the
listing is found by id, and every one of them is erased from the store, started or not), then the executions are
deleted, running ones included (Temporal terminates an execution it deletes, so no activity of theirs starts again),
then the store's rows go (the store refuses every later write under an erased run's id), and once Temporal no longer
describes the executions the store is swept once more. Running it again finds nothing left and deletes nothing.

A running execution is deleted as it runs rather than terminated first: Temporal deletes a running execution at
once, but a closed one (a terminated one always, a completed one sometimes) only once it has acknowledged the
execution's close, which it does every 30 s by default: up to half a minute on an idle dev server, a minute on a busy
one. For the same reason sub-agent runs are deleted before the runs that started them (a parent's close would cancel
them and close them first); a thread's runs outlive it (they are abandoned, not cancelled), so it may go first."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from temporalio.client import Client, WorkflowExecutionStatus

from tempo_agents.erasure.executions import Execution, describe_execution, scope_executions
from tempo_agents.erasure.notification_deliveries import delivery_executions
from tempo_agents.erasure.scope import ErasureReport, ErasureScope
from tempo_agents.erasure.thread_histories import thread_run_ids
from tempo_agents.retention import delete_execution
from tempo_agents.schedules import ScheduleView
from tempo_agents.store.base import Store
from tempo_agents.workflows.thread_payloads import THREAD_WORKFLOW_ID_PREFIX

__all__ = ["VISIBILITY_SETTLE_SECONDS", "erase_scope", "schedules_of"]

_GONE_SECONDS = 300.0
"""How long an erasure waits at most for Temporal to carry out the deletions it accepted: a closed execution's waits
for Temporal to acknowledge its close (every 30 s by default, ``history.transferProcessorUpdateAckInterval``,
retried with a growing backoff), which took up to a minute on a busy two-core machine."""
_GONE_INTERVAL = 0.2

_MOST_LOOKS = 10

VISIBILITY_SETTLE_SECONDS = 1.0
"""How long an erasure waits before it looks again for executions of its scope (Temporal lists a run a moment after
it starts); it stops once a look finds nothing new."""


def schedules_of(scope: ErasureScope, schedules: Sequence[ScheduleView]) -> list[str]:
    """The ids of the schedules whose runs belong to the scope (a run is never a schedule's)."""
    if scope.run is not None:
        return []
    chosen = []
    for schedule in schedules:
        memory = schedule.options.get("memory") or {}
        if memory.get("resource") != scope.resource:
            continue
        if scope.thread is None or memory.get("thread") == scope.thread:
            chosen.append(schedule.id)
    return chosen


@dataclass
class _Erased:
    """What an erasure has done so far, each id once, in the order met."""

    executions: set[tuple[str, str]] = field(default_factory=set)
    stopped: dict[str, None] = field(default_factory=dict)
    runs: dict[str, None] = field(default_factory=dict)
    threads: dict[tuple[str, str], None] = field(default_factory=dict)
    rows: int = 0


async def erase_scope(
    client: Client,
    store: Store,
    task_queue: str,
    scope: ErasureScope,
    *,
    schedules: Sequence[ScheduleView],
    delete_schedule: Callable[[str], Awaitable[None]],
    settle: float = VISIBILITY_SETTLE_SECONDS,
) -> ErasureReport:
    """Erase ``scope`` (see the module's text) and say what was done, by id only.

    Temporal lists a run a moment after it starts, so the executions are looked for again, ``settle`` seconds
    apart, until a look finds none that are not erased already."""
    deleted_schedules = schedules_of(scope, schedules)
    for schedule_id in deleted_schedules:
        await delete_schedule(schedule_id)
    erased = _Erased()
    for look in range(_MOST_LOOKS):
        listed = await scope_executions(client, scope, task_queue)
        found = [
            execution for execution in listed if (execution.workflow_id, execution.run_id) not in erased.executions
        ]
        await _erase_executions(client, store, scope, found, erased)
        if not found and look > 0:  # a look after the settling time found nothing new
            break
        await asyncio.sleep(settle)
    return ErasureReport(
        scope,
        stopped=list(erased.stopped),
        deleted_runs=list(erased.runs),
        deleted_threads=list(erased.threads),
        deleted_schedules=deleted_schedules,
        store_rows=erased.rows,
    )


async def _erase_executions(
    client: Client, store: Store, scope: ErasureScope, listed: Sequence[Execution], erased: _Erased
) -> None:
    """Delete ``listed`` from Temporal (stopping the running ones) and from the store (and the scope's rows in the
    store, which are deleted on every look).

    Running threads go first, once their histories are read: a deleted thread starts no run more, and every run it
    could have started since the listing (its queue) is then known by id, found in Temporal by id and erased from
    the store, its later writes refused, whether it started or not. The histories of the threads' earlier
    executions (before each continued as new) are read too: a run taken out of a queue there never ran, and only
    they say it was sent (the store keeps where it was queued under its id)."""
    thread_executions = [execution for execution in listed if _is_thread(execution)]
    running_threads = [thread for thread in thread_executions if thread.running]
    held = [
        run_id
        for thread in running_threads
        for run_id in await thread_run_ids(client, thread.workflow_id, thread.run_id)
    ]
    deleted = {thread: await delete_execution(client, thread.workflow_id, thread.run_id) for thread in running_threads}
    for thread in thread_executions:
        if not thread.running:
            held += await thread_run_ids(client, thread.workflow_id, thread.run_id)
    executions = [*listed, *await _started_since(client, held, listed)]
    for execution in _leaves_first(executions):  # False: gone already
        if execution not in deleted:
            deleted[execution] = await delete_execution(client, execution.workflow_id, execution.run_id)
    for execution in executions:  # reported in the order found
        erased.executions.add((execution.workflow_id, execution.run_id))
        if _is_thread(execution):
            continue
        erased.runs[execution.workflow_id] = None
        if execution.running and deleted[execution]:
            erased.stopped[execution.workflow_id] = None
    run_ids, threads, resources = _store_keys(scope, executions)
    run_ids = list(dict.fromkeys([*run_ids, *held]))
    deliveries = [
        delivery
        for delivery in await delivery_executions(client, run_ids)
        if (delivery.workflow_id, delivery.run_id) not in erased.executions
    ]
    for delivery in deliveries:
        await delete_execution(client, delivery.workflow_id, delivery.run_id)
        erased.executions.add((delivery.workflow_id, delivery.run_id))
    erased.threads.update(dict.fromkeys(threads))
    erased.rows += await store.erase(run_ids, threads, resources)
    await asyncio.gather(*(_gone(client, execution) for execution in [*executions, *deliveries]))
    erased.rows += await store.erase(run_ids, threads, resources)


async def _started_since(client: Client, run_ids: Sequence[str], listed: Sequence[Execution]) -> list[Execution]:
    """The executions of ``run_ids`` (runs a thread held) that the listing did not show: started since, or not yet
    listed by Temporal. A run that never started has none."""
    known = {execution.workflow_id for execution in listed}
    found = []
    for run_id in dict.fromkeys(run_ids):
        described = None if run_id in known else await describe_execution(client, run_id)
        if described is not None:
            running = described.status == WorkflowExecutionStatus.RUNNING
            found.append(Execution(run_id, described.run_id, running, None))
    return found


def _leaves_first(executions: Sequence[Execution]) -> list[Execution]:
    """The order to delete in: runs found later (sub-agent runs and forks, found from their origins) first, threads
    last."""
    runs = [execution for execution in reversed(executions) if not _is_thread(execution)]
    return runs + [execution for execution in executions if _is_thread(execution)]


def _store_keys(
    scope: ErasureScope, executions: Sequence[Execution]
) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    run_ids = list(dict.fromkeys(execution.workflow_id for execution in executions if not _is_thread(execution)))
    if scope.run is not None and scope.run not in run_ids:
        run_ids.append(scope.run)  # its history may be gone from Temporal already, its rows not
    threads = list(dict.fromkeys(execution.thread for execution in executions if execution.thread is not None))
    if scope.thread is not None and scope.resource is not None and (scope.thread, scope.resource) not in threads:
        threads.append((scope.thread, scope.resource))
    resources = [scope.resource] if scope.resource is not None and scope.thread is None else []
    return run_ids, threads, resources


def _is_thread(execution: Execution) -> bool:
    return execution.workflow_id.startswith(THREAD_WORKFLOW_ID_PREFIX)


async def _gone(client: Client, execution: Execution) -> None:
    """Return once Temporal no longer describes the execution (it deletes in the background: a running one at once, a
    closed one once its close is acknowledged)."""
    for _ in range(round(_GONE_SECONDS / _GONE_INTERVAL)):
        if await describe_execution(client, execution.workflow_id, execution.run_id) is None:
            return
        await asyncio.sleep(_GONE_INTERVAL)
    raise TimeoutError(
        f"Temporal still holds the execution {execution.workflow_id!r} {_GONE_SECONDS:.0f} s after "
        "it was deleted; erase again to finish"
    )
