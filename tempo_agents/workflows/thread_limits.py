"""What a thread's workflow can carry without choking: the largest message, the longest workflow id.

A thread's workflow writes each message into its history twice (the accepted ``thread_send`` update, then the run's
start), and carries its queue across continue-as-new. Temporal refuses a payload over 2 MiB (the SDK fails the
workflow task before sending it), and a workflow task that fails on a message fails again on every retry that still
holds it: the thread stands still and refuses every other message meanwhile. So a message is refused before it is
accepted: by the client (``threads/operations.py``) and again by the workflow's ``thread_send`` validator, which
leaves no trace in the history. Both sides measure the same thing, the message's payload as the pydantic converter
writes it.
ARCHITECTURE.md, "Threads"; README, "Threads".
"""

from __future__ import annotations

__all__ = [
    "ID_TOO_LONG",
    "MAX_CARRIED_QUEUE_BYTES",
    "MAX_MESSAGE_BYTES",
    "MAX_WORKFLOW_ID_CHARS",
    "MESSAGE_TOO_LARGE",
    "message_too_large",
    "run_id_too_long",
]

MAX_MESSAGE_BYTES = 1 << 20
"""The largest ``thread_send`` payload (the message as its run would start, with its options): 1 MiB, half of
Temporal's 2 MiB limit on one payload, so the run's start, which carries the same input, fits too."""

MAX_CARRIED_QUEUE_BYTES = 3 << 19
"""A thread continues as new carrying its queue only while the queue's payload is at most 1.5 MiB; a larger queue
starts its next run first (each start makes it shorter)."""

MAX_WORKFLOW_ID_CHARS = 1000
"""Temporal's default longest workflow id (``limit.maxIDLength``): a thread's workflow id
(``thread-<task queue>-<resource>-<thread>``, each part percent-escaped) and a run id must fit it."""

MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"
"""The error type of a message refused for its size (the ``thread_send`` validator's ``ApplicationError``)."""

ID_TOO_LONG = "ID_TOO_LONG"
"""The error type of a message refused because an id it names is longer than a workflow id may be."""


def message_too_large(size: int) -> str | None:
    """Why a ``thread_send`` payload of ``size`` bytes is refused, or ``None`` when it fits."""
    if size <= MAX_MESSAGE_BYTES:
        return None
    return (
        f"the message is too large for a thread: {size} bytes as sent, at most {MAX_MESSAGE_BYTES} bytes (1 MiB) "
        "for the messages and options of one run; send a large document by reference (a URL or a file id a tool "
        "reads) instead"
    )


def run_id_too_long(run_id: str) -> str | None:
    """Why a run id is refused (it becomes the run's workflow id), or ``None``."""
    if len(run_id) <= MAX_WORKFLOW_ID_CHARS:
        return None
    return f"the run id is {len(run_id)} characters long; a run id has at most {MAX_WORKFLOW_ID_CHARS}"
