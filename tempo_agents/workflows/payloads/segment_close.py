"""How a journal segment ends: told to the activity that may end it (a model step, the last call of a batch), or
done by the finish activity when none could."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from tempo_agents._wire import WireModel
from tempo_agents.journal.outbox import JournalOutbox, StepFinishNote, legacy_outbox
from tempo_agents.models.usage import Usage
from tempo_agents.workflows.payloads.run_input import RunOptions

__all__ = ["BatchClose", "FinishInput", "SegmentClose"]


class SegmentClose(WireModel):
    """How the activity that ends a journal segment writes its end: the ``step-finish`` of the step in
    progress, ``error`` when the run failed, the run's messages saved to memory, and ``finish``."""

    segment: int
    steps: int
    usage: Usage
    """The run's usage before the closing activity's own (a model step adds its step's)."""
    reason: str | None = None
    """The finish reason; ``None`` for a model step: its own finish reason."""
    step_finish: StepFinishNote | None = None
    error: str | None = None
    abandoned_step: int | None = None
    """A model step that failed for good: what its attempts streamed is dropped (``step-reset``)."""


class BatchClose(WireModel):
    """Given to each tool call of a step: the call that finds every call of the batch ended closes the
    segment when one of them suspended (``suspended``) or the run ends after them (``reason_if_done``)."""

    outcome_keys: list[str]
    """The saved-outcome keys of the batch's calls."""
    close: SegmentClose
    """``reason`` is unset: chosen by the outcomes."""
    reason_if_done: str | None = None
    suspended_elsewhere: bool = False
    """Calls of earlier batches still wait for a person."""


class FinishInput(WireModel):
    """Input of the finish activity: ends a segment when no other activity could (an error, a cancelled
    run, parallel calls whose last one was lost)."""

    run_id: str
    agent_id: str
    options: RunOptions
    close: SegmentClose
    outbox: JournalOutbox = Field(default_factory=JournalOutbox)

    @model_validator(mode="before")
    @classmethod
    def _legacy_fields(cls, data: Any) -> Any:
        data = legacy_outbox(data)
        if isinstance(data, dict) and "close" not in data and "reason" in data:
            data = dict(data)
            data["close"] = {
                "segment": data.pop("segment", 0),
                "steps": data.pop("steps", 0),
                "usage": data.pop("usage", {}),
                "reason": data.pop("reason"),
                "error": data.pop("error", None),
                "stepFinish": data["outbox"].pop("stepFinish", None),
            }
        return data
