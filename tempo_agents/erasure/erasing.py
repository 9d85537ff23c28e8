"""Erasing a scope: its schedules, its running executions stopped, its rows in the store, its executions in Temporal.

The order keeps anything new from appearing while it works: schedules first (no new runs start), then running
executions are terminated (no activity of theirs starts again), then the store's rows go, then the executions'
histories, then the store is swept once more for a write an activity finished while it was being stopped. Running it
again finds nothing left and deletes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.erasure.executions import Execution, scope_executions
from tempo_agents.erasure.scope import ErasureReport, ErasureScope
from tempo_agents.retention import delete_execution
from tempo_agents.schedules import ScheduleView
from tempo_agents.store.base import Store
from tempo_agents.workflows.thread_payloads import THREAD_WORKFLOW_ID_PREFIX

__all__ = ["ERASED_REASON", "VISIBILITY_SETTLE_SECONDS", "erase_scope", "schedules_of"]

_GONE_CHECKS = 600
_GONE_INTERVAL = 0.1

_MOST_LOOKS = 10

VISIBILITY_SETTLE_SECONDS = 1.0
"""How long an erasure waits before it looks again for executions of its scope (Temporal lists a run a moment after
it starts); it stops once a look finds nothing new."""

ERASED_REASON = "erased on request"
"""The reason recorded with each execution an erasure terminates."""


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


async def erase_scope(
    client: Client,
    store: Store,
    task_queue: str,
    scope: ErasureScope,
    *,
    schedules: Sequence[ScheduleView] = (),
    delete_schedule: Callable[[str], Awaitable[None]] | None = None,
    settle: float = VISIBILITY_SETTLE_SECONDS,
) -> ErasureReport:
    """Erase ``scope`` (see the module's text) and say what was done, by id only.

    Temporal lists a run a moment after it starts, so the executions are looked for again, ``settle`` seconds
    apart, until a look finds none that are not erased already."""
    report = ErasureReport(scope)
    for schedule_id in schedules_of(scope, schedules):
        if delete_schedule is not None:
            await delete_schedule(schedule_id)
            report.deleted_schedules.append(schedule_id)
    erased: set[tuple[str, str]] = set()
    threads: list[tuple[str, str]] = []
    rows = 0
    for look in range(_MOST_LOOKS):
        listed = await scope_executions(client, scope, task_queue)
        found = [execution for execution in listed if (execution.workflow_id, execution.run_id) not in erased]
        rows += await _erase_executions(client, store, scope, found, report, threads)
        erased |= {(execution.workflow_id, execution.run_id) for execution in found}
        if not found and look > 0:  # a look after the settling time found nothing new
            break
        await asyncio.sleep(settle)
    return ErasureReport(
        scope,
        stopped=list(dict.fromkeys(report.stopped)),
        deleted_runs=list(dict.fromkeys(report.deleted_runs)),
        deleted_threads=list(dict.fromkeys(threads)),
        deleted_schedules=report.deleted_schedules,
        store_rows=rows,
    )


async def _erase_executions(
    client: Client,
    store: Store,
    scope: ErasureScope,
    executions: Sequence[Execution],
    report: ErasureReport,
    threads: list[tuple[str, str]],
) -> int:
    """Stop, delete from the store and delete from Temporal ``executions`` (and the scope's rows in the store, which
    are deleted on every look: a run erased in Temporal may have an activity's last write land after)."""
    for execution in executions:
        if execution.running and await _terminated(client, execution) and not _is_thread(execution):
            report.stopped.append(execution.workflow_id)
    run_ids, found_threads, resources = _store_keys(scope, executions)
    threads.extend(found_threads)
    rows = await store.erase(run_ids, found_threads, resources)
    for execution in executions:
        await delete_execution(client, execution.workflow_id, execution.run_id)
        if not _is_thread(execution):
            report.deleted_runs.append(execution.workflow_id)
    await asyncio.gather(*(_gone(client, execution) for execution in executions))
    return rows + await store.erase(run_ids, found_threads, resources)


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


async def _terminated(client: Client, execution: Execution) -> bool:
    try:
        await client.get_workflow_handle(execution.workflow_id, run_id=execution.run_id).terminate(reason=ERASED_REASON)
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:  # closed since it was listed
            return False
        raise
    return True


async def _gone(client: Client, execution: Execution) -> None:
    """Return once Temporal no longer describes the execution (it deletes in the background, within moments)."""
    handle = client.get_workflow_handle(execution.workflow_id, run_id=execution.run_id)
    for _ in range(_GONE_CHECKS):
        try:
            await handle.describe()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                return
            raise
        await asyncio.sleep(_GONE_INTERVAL)
    raise TimeoutError(
        f"Temporal still holds the execution {execution.workflow_id!r} {_GONE_CHECKS * _GONE_INTERVAL:.0f} s after "
        "it was deleted; erase again to finish"
    )
