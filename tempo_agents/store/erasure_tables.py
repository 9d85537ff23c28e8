"""What erasing runs, threads and resources deletes from a store. Both stores delete from these and only these."""

from __future__ import annotations

from collections.abc import Sequence

from tempo_agents.budgets import resource_scope_key, resource_threads_prefix, run_scope_key, thread_scope_key

__all__ = ["RESOURCE_TABLES", "RUN_TABLES", "usage_scopes"]

RUN_TABLES = (
    "journal",
    "transcript",
    "transcript_revision",
    "outcomes",
    "waiting_calls",
    "answered_calls",
    "child_runs",
    "thread_messages",
    "run_expiries",
)
"""Tables with a ``run_id`` column: a run's journal, transcript, saved outcomes (tool results, notification records),
waiting and answered calls (answers included), and the messages it added to its thread."""

RESOURCE_TABLES = ("thread_messages", "waiting_calls", "answered_calls")
"""Tables with a ``resource_id`` column (and, for a thread, ``thread_id``): a thread's messages, whichever run added
them, and the calls that waited or were answered there. A thread's state (``thread_state``, keyed by thread id only)
is erased with the thread unless a thread of the same id lives on under another resource."""


def usage_scopes(
    run_ids: Sequence[str], threads: Sequence[tuple[str, str]], resources: Sequence[str]
) -> tuple[list[str], list[str]]:
    """The usage counters (``usage_counters``, by ``scope``) an erasure deletes: the scope keys of its runs, its
    threads (thread id, resource id) and its resources, and the prefix of the keys of every thread of its resources,
    known by id or not."""
    keys = [run_scope_key(run_id) for run_id in run_ids]
    keys += [thread_scope_key(thread_id, resource_id) for thread_id, resource_id in threads]
    keys += [resource_scope_key(resource) for resource in resources]
    return keys, [resource_threads_prefix(resource) for resource in resources]
