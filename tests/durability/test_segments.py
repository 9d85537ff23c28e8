"""The journal segments of a run, as ``Segments`` keeps them (pure workflow state: no Temporal server).

The committed histories (test_replay) hold both paths to what runs did; these pin the bookkeeping itself.
"""

from __future__ import annotations

from tempo_agents.journal.outbox import StepFinishNote
from tempo_agents.models.usage import Usage
from tempo_agents.workflows.segments import Segments

NOTE = StepFinishNote(step=3, reason="tool-calls", usage=Usage(), is_continued=False, segment=0)


def test_a_resume_opens_the_next_segment_only_once_the_current_one_is_closed() -> None:
    segments = Segments(2)  # carried across continue-as-new: segment 2 is open
    assert segments.is_open and segments.has_closed(1) and not segments.has_closed(2)
    assert not segments.open_next() and segments.current == 2

    segments.close()
    assert not segments.is_open and segments.has_closed(2)
    assert segments.open_next() and segments.current == 3
    assert segments.is_open and not segments.has_closed(3)


def test_activities_are_told_how_to_end_the_segment() -> None:
    segments = Segments(0)
    segments.take_path(closed_by_activities=True)
    usage = Usage(input_tokens=5)
    model_step = segments.model_step_close(4, usage)
    assert model_step is not None and (model_step.segment, model_step.steps, model_step.usage) == (0, 4, usage)
    batch = segments.batch_close(["k1", "k2"], NOTE, usage, "length", suspended_elsewhere=True)
    assert batch is not None
    assert (batch.outcome_keys, batch.reason_if_done, batch.suspended_elsewhere) == (["k1", "k2"], "length", True)
    assert (batch.close.segment, batch.close.steps, batch.close.reason) == (0, 4, None)
    assert batch.close.step_finish == NOTE.model_copy(update={"segment": 0})
    assert not segments.journals_resume_start and not segments.memo_on_every_status


def test_runs_started_before_the_patch_keep_their_path() -> None:
    segments = Segments(0)
    segments.take_path(closed_by_activities=False)
    assert segments.model_step_close(1, Usage()) is None
    assert segments.batch_close(["k"], NOTE, Usage(), None, suspended_elsewhere=False) is None
    assert segments.journals_resume_start and segments.memo_on_every_status
