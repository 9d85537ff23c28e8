"""The workflow's outbox: what only the workflow knows, written to the store by the run's next activity.

Workflow code never does I/O, so a chunk it produces (``start``, a mode change, a task-list update, a
declined resume) or a store write (an in-workflow tool's transcript entry, the task list of a thread)
waits here until an activity runs; that activity writes the outbox first, then does its own work. No
activity exists only to write the journal (ARCHITECTURE.md, "The journal").
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from tempo_agents._wire import WireModel
from tempo_agents.models.usage import Usage

__all__ = ["JournalOutbox", "JournalRecord", "StepFinishNote", "ThreadStateRecord", "TranscriptRecord", "legacy_outbox"]


class JournalRecord(WireModel):
    """A chunk in wire form, with its identity key when it is durable."""

    chunk: dict[str, Any]
    key: str | None = None


class StepFinishNote(WireModel):
    """What the workflow knows of a finished step; the writing activity turns it into ``step-finish``."""

    step: int
    reason: str
    usage: Usage
    is_continued: bool
    segment: int = 0


class TranscriptRecord(WireModel):
    """A transcript entry the workflow produced (an in-workflow tool's result)."""

    step: int
    part: str
    position: int
    message: dict[str, Any]


class ThreadStateRecord(WireModel):
    """A thread-state value the workflow changed (the task list)."""

    thread_id: str
    type: str
    value: Any = None


class JournalOutbox(WireModel):
    """Chunks and store writes the workflow owes the store, in the order they happened."""

    model_config = ConfigDict(frozen=False)

    records: list[JournalRecord] = Field(default_factory=list)
    step_finish: StepFinishNote | None = None
    """The ``step-finish`` of the step before, written after ``records``."""
    transcript: list[TranscriptRecord] = Field(default_factory=list)
    thread_state: list[ThreadStateRecord] = Field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.records or self.step_finish or self.transcript or self.thread_state)

    def then(self, later: JournalOutbox) -> JournalOutbox:
        """This outbox followed by a later one (an outbox handed to an activity that failed comes back)."""
        return JournalOutbox(
            records=[*self.records, *later.records],
            step_finish=later.step_finish or self.step_finish,
            transcript=[*self.transcript, *later.transcript],
            thread_state=[*self.thread_state, *later.thread_state],
        )


def legacy_outbox(data: Any) -> Any:
    """Read inputs written before the outbox existed (``pending``, ``previous_step``, ``writes``)."""
    if not isinstance(data, dict) or not ({"pending", "previousStep", "previous_step", "writes"} & data.keys()):
        return data
    data = dict(data)
    writes = data.pop("writes", None) or {}
    data["outbox"] = {
        "records": data.pop("pending", None) or [],
        "stepFinish": data.pop("previousStep", None) or data.pop("previous_step", None),
        "transcript": writes.get("transcript", []),
        "threadState": writes.get("threadState", writes.get("thread_state", [])),
    }
    return data
