"""The segments of a run's journal: the one open now, the last one closed, and who writes their ends.

Every segment ends with a ``finish`` chunk. The first ends when the run finishes or first waits; every resume
opens the next. Runs started since the ``segments-closed-by-activities`` patch tell their activities how to end
the segment (a model step that called no tool, the last call of a batch) and use the finish activity only when
none could. Runs started before it take the *pre-patch path*, kept so their histories replay: activities get
no closing instructions, the finish activity ends every segment, a resume's ``start`` chunk is journaled at once
by a local activity, and the memo lists the waiting calls on every change of status.

Workflow state: pure and deterministic (the workflow asks the patch and hands the answer in).
"""

from __future__ import annotations

from tempo_agents.journal.outbox import StepFinishNote
from tempo_agents.models.usage import Usage
from tempo_agents.workflows.payloads import BatchClose, SegmentClose

__all__ = ["Segments"]


class Segments:
    """The open segment's number, whether it is closed yet, and the path (by activities, or pre-patch)."""

    def __init__(self, current: int) -> None:
        self.current = current
        """The segment open now (or closed last, until a resume opens the next)."""
        self._last_closed = current - 1
        self.closed_by_activities = True
        """``False`` on the pre-patch path; settled by :meth:`take_path` when the run starts."""

    def take_path(self, closed_by_activities: bool) -> None:
        """The run's path, as the patch check answered when the run started."""
        self.closed_by_activities = closed_by_activities

    @property
    def is_open(self) -> bool:
        """Whether the current segment still needs its end written."""
        return self._last_closed < self.current

    def has_closed(self, segment: int) -> bool:
        """Whether ``segment`` has its end in the journal (a resume's update returns once it has)."""
        return self._last_closed >= segment

    def close(self) -> None:
        """The current segment's end was written (by an activity, or the finish activity)."""
        self._last_closed = self.current

    def open_next(self) -> bool:
        """A resume: open the next segment if the current one is closed; whether it did."""
        if self._last_closed != self.current:
            return False
        self.current += 1
        return True

    def model_step_close(self, steps: int, usage: Usage) -> SegmentClose | None:
        """How a model step that calls no tool ends the segment (``None`` on the pre-patch path)."""
        if not self.closed_by_activities:
            return None
        return SegmentClose(segment=self.current, steps=steps, usage=usage)

    def batch_close(
        self,
        outcome_keys: list[str],
        step_note: StepFinishNote,
        usage: Usage,
        reason_if_done: str | None,
        suspended_elsewhere: bool,
    ) -> BatchClose | None:
        """How the last call of a batch ends the segment (``None`` on the pre-patch path)."""
        if not self.closed_by_activities:
            return None
        return BatchClose(
            outcome_keys=outcome_keys,
            close=SegmentClose(
                segment=self.current,
                steps=step_note.step + 1,
                usage=usage,
                step_finish=step_note.model_copy(update={"segment": self.current}),
            ),
            reason_if_done=reason_if_done,
            suspended_elsewhere=suspended_elsewhere,
        )

    @property
    def journals_resume_start(self) -> bool:
        """Pre-patch path: a resume's ``start`` chunk is journaled at once, not carried by the next activity."""
        return not self.closed_by_activities

    @property
    def memo_on_every_status(self) -> bool:
        """Pre-patch path: the memo's waiting calls are written on every change of status, not only on
        ``suspended``."""
        return not self.closed_by_activities
