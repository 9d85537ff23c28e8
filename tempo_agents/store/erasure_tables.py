"""What erasing runs, threads and resources deletes from a store. Both stores delete from these and only these."""

from __future__ import annotations

__all__ = ["RESOURCE_TABLES", "RUN_TABLES"]

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
