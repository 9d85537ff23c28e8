"""What a model reads about calls that wait for people on a thread (README, "Threads": "What the model sees").

A waiting call has no result yet, and providers refuse an assistant tool call without its result. So the call's
place in the transcript holds a marker result (written with its suspension) that says the call waits, for whom and
since when; every later run of the thread reads it there. When the answer comes, the call's real result takes the
marker's place, right after the call (where providers want it). If the run had yielded its thread and others spoke
meanwhile, its next model step first reads what they said (in the order it was said), then a note that says the
answer came after it, and goes on from there; the note is the run's own message, saved to the thread after what was
said, so the thread records the answer where it happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tempo_agents.models.messages import Message, TextPart
from tempo_agents.store.base import Store, TranscriptEntry
from tempo_agents.workflows.payloads import ThreadCatchUp

__all__ = [
    "ANSWERED_PART",
    "ANSWERED_POSITION",
    "SAID_PART_PREFIX",
    "SAID_POSITION_BASE",
    "catch_up",
    "is_said_by_others",
    "waiting_note",
]

SAID_PART_PREFIX = "thread-said-"
"""Transcript parts of what other runs said on the thread while this one waited: never saved to the thread again."""

ANSWERED_PART = "thread-answered"

SAID_POSITION_BASE = -3_000_000
"""Before a step's steers and its assistant message, in the order said."""

ANSWERED_POSITION = -2_000_000


def waiting_note(kind: str, approvers: Sequence[str], since: datetime) -> dict[str, Any]:
    """The fields a waiting call's marker result adds for the model: that it waits, for whom, since when."""
    who = ", ".join(approvers) if approvers else "anyone allowed to answer"
    what = "an approval" if kind == "approval" else "an answer"
    return {
        "status": "waiting",
        "waitingFor": list(approvers),
        "since": since.isoformat(),
        "note": (
            f"This call waits for {what} from a person ({who}) since {since.isoformat()}. It has no result yet; "
            "its result will take this note's place when the answer comes."
        ),
    }


def is_said_by_others(entry: TranscriptEntry) -> bool:
    return entry.part.startswith(SAID_PART_PREFIX)


async def catch_up(store: Store, run_id: str, thread: str, resource: str, step: int, since: ThreadCatchUp) -> None:
    """Put what was said on the thread while the run waited into its transcript before ``step``, then the note that
    the answer came after it (nothing when nothing was said). Keyed entries: a retried step writes the same."""
    said = await store.thread_messages_after(thread, resource, run_id)
    if not said:
        return
    entries = [
        TranscriptEntry(step, f"{SAID_PART_PREFIX}{k:06d}", SAID_POSITION_BASE + k, message)
        for k, message in enumerate(said)
    ]
    note = (
        f"(Note: this run waited for a person's answer from {since.waited_since.isoformat()} until "
        f"{since.answered_at.isoformat()}. Meanwhile the conversation went on with the messages just above. The "
        "answer has come: the waiting call's result now stands right after the call. Go on with this run, "
        "keeping in mind what was said meanwhile.)"
    )
    entries.append(
        TranscriptEntry(
            step, ANSWERED_PART, ANSWERED_POSITION, Message(role="user", content=[TextPart(text=note)]).to_wire()
        )
    )
    await store.put_transcript(run_id, entries)
