"""Where a run sent to a thread waits, found from its id alone.

A run sent to a memory thread whose active run holds it is queued by the thread's workflow: it has no workflow of
its own until its turn comes, so Temporal does not know its id. A run the thread starts at once is no different for
a moment: the thread answers ``started`` when it decides to, and its run's workflow exists once Temporal has carried
out the thread's start (seconds, on a loaded server). The sender keeps the thread's address in the store under the
run's id (a saved outcome: deleted and erased with the run's other rows), so that whoever knows only the run's id
(the HTTP stream routes, ``App.attach``, the access guard looking for a run's tenant) can find the thread and ask it
about the run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from temporalio.client import Client

from tempo_agents.retention import Retention
from tempo_agents.store.base import SavedOutcome, Store
from tempo_agents.threads.operations import thread_view
from tempo_agents.workflows.thread_payloads import ThreadOutcome, ThreadRun, ThreadRunEntry

__all__ = [
    "QUEUED_ON_KEY",
    "QueuedPlace",
    "QueuedRun",
    "expire_removed_run",
    "queued_place",
    "queued_run",
    "remember_thread",
]

QUEUED_ON_KEY = "thread:queued-on"
"""The saved outcome, under the queued run's id, that holds its thread's address."""


@dataclass(frozen=True)
class QueuedPlace:
    """The thread a run was queued on: the task queue its workflow runs on, the thread, the resource (its tenant)."""

    task_queue: str
    thread_id: str
    resource_id: str


async def remember_thread(store: Store, run: ThreadRun, outcome: ThreadOutcome) -> None:
    """Keep the thread's address under the run's id when the thread queued it or started it (nothing for a steered,
    refused or duplicate message: no run of its own)."""
    memory = run.run_input.options.memory
    if outcome.outcome not in ("queued", "started") or memory is None:
        return
    place = {"taskQueue": run.task_queue, "threadId": memory.thread, "resourceId": memory.resource}
    await store.record(outcome.run_id, (), (), outcome=SavedOutcome(QUEUED_ON_KEY, place))


async def queued_place(store: Store, run_id: str) -> QueuedPlace | None:
    """The thread ``run_id`` was queued on, if a sender kept it (whether or not the run has started since)."""
    saved = await store.saved_outcome(run_id, QUEUED_ON_KEY)
    if saved is None:
        return None
    return QueuedPlace(task_queue=saved["taskQueue"], thread_id=saved["threadId"], resource_id=saved["resourceId"])


@dataclass(frozen=True)
class QueuedRun:
    """A run a thread was sent, as its thread's workflow knows it now: where (``place``), its entry (its ``state``:
    ``queued``, ``active``, ``waiting`` or ``done``), its ``position`` while queued (1: next) and the runs that hold
    the thread (``active_run_ids``)."""

    place: QueuedPlace
    entry: ThreadRunEntry
    position: int | None
    active_run_ids: tuple[str, ...]


async def queued_run(client: Client, store: Store, run_id: str) -> QueuedRun | None:
    """The run as its thread knows it, when its sender kept the thread's address; ``None`` for any other id: a kept
    address is believed only when the thread's workflow lists the run."""
    place = await queued_place(store, run_id)
    if place is None:
        return None
    view = await thread_view(client, place.task_queue, place.thread_id, place.resource_id)
    active = tuple(entry.run_id for entry in view.active)
    for index, entry in enumerate(view.queued):
        if entry.run_id == run_id:
            return QueuedRun(place, entry, index + 1, active)
    for entry in (*view.active, *view.waiting, *view.done):
        if entry.run_id == run_id:
            return QueuedRun(place, entry, None, active)
    return None


async def expire_removed_run(client: Client, store: Store, retention: Retention, run_id: str, resource_id: str) -> None:
    """A run taken out of its thread's queue never runs, so it never closes and retention's sweeper never notes it:
    what the store keeps of it (where it was queued) expires from its removal, as a closed run's records would."""
    queued = await queued_run(client, store, run_id)
    agent_id = queued.entry.agent_id if queued is not None else None
    expiry = retention.expires_at(agent_id, resource_id, time.time())
    if expiry is not None:
        await store.set_expiries([(run_id, expiry)])
