"""A run whose budget policy waits: when a model step finds a limit reached, the run waits for a person to raise its
budget (the step then runs again) or to end it (ARCHITECTURE.md, "Budgets").

The model step journals the wait and ends the segment; the run shows the wait (the ``budget`` query), yields its
thread as a run that waits for people does, and takes the ``budget`` update's answer. The journal records the answer
(``data-budget-answered``) in the next segment. Behind the ``budget-waits`` patch, asked only when such a stop comes.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from tempo_agents.journal import constructors, keys
from tempo_agents.journal.outbox import JournalRecord, StepFinishNote
from tempo_agents.models.usage import Usage
from tempo_agents.workflows.payloads import BudgetAnswer, BudgetState, BudgetWait, ModelStepResult, ResumeAccepted
from tempo_agents.workflows.resume_errors import NOT_SUSPENDED
from tempo_agents.workflows.run_journal import JournalKeeper
from tempo_agents.workflows.run_patches import BUDGET_WAITS
from tempo_agents.workflows.run_state import RunState
from tempo_agents.workflows.thread_turn import ThreadTurn

__all__ = ["BudgetWaits"]


class BudgetWaits:
    """The run's waits for its budget: how many there were, the one under way, and the answer to it."""

    def __init__(self, state: RunState, journal: JournalKeeper, thread: ThreadTurn) -> None:
        self._state = state
        self._journal = journal
        self._thread = thread
        self.waits = state.carried.budget_waits
        """How often the run waited for its budget (names the next wait)."""
        self.waiting: BudgetWait | None = None
        """The wait under way (the ``budget`` query shows it)."""
        self._answer: BudgetAnswer | None = None
        self.answered: str | None = None
        """The wait an answer ended just now: the next model step removes it from the store's waiting calls."""

    def state(self) -> BudgetState:
        """The run's budget (raised by people's answers), its memory, and whether it waits for a raise."""
        options = self._state.options
        memory = options.memory
        return BudgetState(
            budget=options.budget,
            thread=memory.thread if memory is not None else None,
            resource=memory.resource if memory is not None else None,
            waiting=self.waiting,
        )

    async def answer(self, answer: BudgetAnswer) -> ResumeAccepted:
        """The ``budget`` update: raise the budget of a run that waits for it (the step runs again) or end the run.

        The journal shows the wait before the workflow hears of the model step that found the limit: an answer
        that arrives while a model step runs waits for it, then is decided."""
        await workflow.wait_condition(lambda: self._state.model_step_running is None)
        wait = self.waiting
        if wait is None or wait.stop.wait_id is None or self._answer is not None:
            raise _not_waiting_for_budget()
        self._answer = answer
        return ResumeAccepted(tool_call_id=wait.stop.wait_id, after_key=keys.finish(self._journal.segments.current))

    def validate(self, answer: BudgetAnswer) -> None:
        """The ``budget`` update's validator."""
        if answer.action == "raise" and answer.budget is None:
            raise ApplicationError("raising a budget needs the new budget", type="InvalidBudget", non_retryable=True)
        if self._state.model_step_running is None and (self.waiting is None or self._answer is not None):
            raise _not_waiting_for_budget()

    @staticmethod
    def waits_for(result: ModelStepResult) -> bool:
        """Whether the model step found a limit reached whose policy waits for a person."""
        stop = result.budget_stop
        return stop is not None and stop.wait_id is not None and workflow.patched(BUDGET_WAITS)

    async def wait(self, result: ModelStepResult) -> BudgetAnswer:
        """Wait for a person's answer to the limit ``result`` reached; a raise becomes the run's budget."""
        stop = result.budget_stop
        assert stop is not None and stop.wait_id is not None
        journal, state = self._journal, self._state
        if result.closed_segment:
            journal.segments.close()
        elif journal.segments.is_open:  # a run on the path where the finish activity ends every segment
            journal.outbox.step_finish = StepFinishNote(
                step=stop.step, reason="suspended", usage=Usage(), is_continued=False, segment=journal.segments.current
            )
            await journal.finish_segment("suspended")
        self.waiting = BudgetWait(stop=stop, since=workflow.now())
        journal.set_status("suspended")
        await self._thread.give_up()
        await workflow.wait_condition(lambda: self._answer is not None)
        answer, self._answer = self._answer, None
        assert answer is not None
        if answer.action == "raise":
            await self._thread.take_back()
        self.waiting = None
        self.answered = stop.wait_id
        self.waits += 1
        if answer.action == "raise":
            options = state.options.model_copy(update={"budget": answer.budget})
            state.run_input = state.run_input.model_copy(update={"options": options})
        journal.start_next_segment()
        data: dict[str, Any] = {"waitId": stop.wait_id, "action": answer.action, "answeredBy": answer.answered_by}
        if answer.budget is not None:
            data["budget"] = answer.budget.to_wire()
        journal.outbox.records.append(
            JournalRecord(
                chunk=constructors.data_chunk(state.run_id, "data-budget-answered", data),
                key=f"budget-answered:{stop.wait_id}",
            )
        )
        journal.set_status("running")
        await journal.write_resume_start()
        return answer


def _not_waiting_for_budget() -> ApplicationError:
    return ApplicationError("run is not waiting for its budget", type=NOT_SUSPENDED, non_retryable=True)
