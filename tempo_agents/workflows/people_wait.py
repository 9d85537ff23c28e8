"""How a run waits for people, and takes the answered calls up again (ARCHITECTURE.md, "Waiting for people").

While calls wait and none is answered, the run is ``suspended``: its segment is closed, its thread yielded, and it
sleeps until an answer, a deadline, a reminder or escalation, a refused signal's note, an interrupt or a child that
closed on its own wakes it. The resolved calls are then taken up in one batch, in the next segment, and run again
(where they may wait once more). An interrupt while the run waits ends the waiting calls with a tool error, and the
run.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from tempo_agents.journal.outbox import StepFinishNote
from tempo_agents.workflows.call_batch import CallBatch
from tempo_agents.workflows.run_journal import JournalKeeper
from tempo_agents.workflows.run_patches import CALL_ALARMS
from tempo_agents.workflows.run_state import RunState
from tempo_agents.workflows.steering import INTERRUPTED, interrupted_call_message, interrupted_record
from tempo_agents.workflows.thread_turn import ThreadTurn

__all__ = ["PeopleWait"]


class PeopleWait:
    """The run's waits for people, between a batch of calls and the next model step."""

    def __init__(self, state: RunState, journal: JournalKeeper, thread: ThreadTurn, batch: CallBatch) -> None:
        self._state = state
        self._journal = journal
        self._thread = thread
        self._batch = batch

    async def until_answered(self, step_note: StepFinishNote) -> None:
        """Wait until no call waits: each answered batch runs again, in the next segment (``step_note`` is the
        step-finish of the step whose calls wait)."""
        state, journal, calls = self._state, self._journal, self._state.calls
        while calls.any_waiting:
            if not calls.any_resolved:
                journal.set_status("suspended")
                if journal.segments.is_open:
                    journal.outbox.step_finish = step_note.model_copy(
                        update={"reason": "suspended", "segment": journal.segments.current}
                    )
                    await journal.finish_segment("suspended")
                await self._thread.give_up()
                while not calls.any_resolved:
                    if state.interrupted():
                        await self._end_interrupted()
                        return
                    await self._sleep()
                    await journal.write_notes()

            answered = calls.take_resolved()
            state.handed_off = state.handed_off or any(r.action == "handoff" for _, r in answered)
            if not state.handed_off:
                await self._thread.take_back()
            journal.start_next_segment()
            journal.set_status("running")
            await journal.write_resume_start()
            if state.handed_off:
                reason_if_done: str | None = "handed-off"
            else:
                reason_if_done = "length" if state.step >= state.options.max_steps else None
            await self._batch.run(
                [self._batch.resumed_input(waiting, resolution) for waiting, resolution in answered],
                step_note,
                reason_if_done,
            )

    async def _sleep(self) -> None:
        """Sleep until a call is resolved, a note is to be journaled, or an interrupt came; deadlines, reminders and
        escalations come due meanwhile."""
        state, journal, calls, children = self._state, self._journal, self._state.calls, self._batch.children
        while not calls.any_resolved and not journal.notes and state.interrupt is None:
            alarms = calls.has_alarms() and workflow.patched(CALL_ALARMS)
            deadline = calls.next_wakeup(alarms)
            timeout = None if deadline is None else max(timedelta(0), deadline - workflow.now())
            try:
                await workflow.wait_condition(
                    lambda: bool(
                        calls.any_resolved
                        or journal.notes
                        or state.interrupt is not None
                        or children.closed_alone(calls.waiting_ids())
                    ),
                    timeout=timeout,
                )
            except TimeoutError:
                calls.expire(workflow.now())
                if alarms:
                    journal.ring(calls.ring(workflow.now()))
            calls.resolve(children.closed_alone(calls.waiting_ids()))

    async def _end_interrupted(self) -> None:
        """Interrupted while waiting for a person: the waiting calls end with a tool error (a later run of the thread
        reads a result for every call), the end goes into a segment of its own, as a cancellation's does."""
        state, journal = self._state, self._journal
        assert state.interrupt is not None
        journal.start_next_segment()
        for call in state.calls.abandon():
            message = interrupted_call_message(call.tool_name)
            journal.end_call_with_error(call.step, call.tool_call_id, call.tool_name, call.args, call.index, message)
        journal.outbox.records.append(interrupted_record(state.run_id, state.interrupt, state.step))
        state.ended_interrupted = True
        state.steers.close()
        journal.set_status("completed")
        await journal.finish_segment(INTERRUPTED)
