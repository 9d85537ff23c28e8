"""Where an attempt of a model step starts: the result an earlier attempt saved, or this attempt's number and journal.

A step whose result is saved (its worker died before Temporal heard of it) is answered from the store. A local
step's starts are counted in the store, since a lost worker's local activity starts again at attempt 1. A step's
writes are fenced, since an older start may still run beside the newer one and only the newest may write: a local
start whose workflow task timed out, or an activity's attempt whose heartbeats came too late on a starved worker
while it was still writing (ARCHITECTURE.md, "Local activities").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from temporalio.exceptions import ApplicationError

from tempo_agents.activities._running import (
    attempt,
    is_local,
    saved_or_counted_start,
    start_fence,
)
from tempo_agents.activity_options import MODEL_STEP_DEFAULTS
from tempo_agents.journal import keys
from tempo_agents.journal.writer import RunJournal
from tempo_agents.workflows.payloads import ModelStepInput, ModelStepResult

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry
    from tempo_agents.agent.agent import Agent

__all__ = ["StepAttempt"]


@dataclass(frozen=True)
class StepAttempt:
    """One attempt of a model step: its number (for a local step, its counted start), the journal it writes
    through, and the result an earlier attempt saved (``None``: the step runs)."""

    number: int
    local: bool
    journal: RunJournal
    saved: ModelStepResult | None

    @classmethod
    async def begin(cls, registry: Registry, step_input: ModelStepInput) -> StepAttempt:
        """Read the saved result when an earlier attempt may have saved one; count this start (a local step's or a
        retry's) and fence its writes."""
        store = registry.store
        key = keys.model_step_outcome(step_input.step)
        number = attempt()
        local = is_local()
        if local:  # a lost worker's local step starts again at attempt 1: its starts are counted in the store
            saved, number = await saved_or_counted_start(store, step_input.run_id, key)
            started = number
        elif number > 1:  # a retry counts itself, which fences every attempt before it
            saved, started = await saved_or_counted_start(store, step_input.run_id, key)
        else:  # the first attempt counts nothing: its fence refuses its writes once any retry is counted
            saved, started = None, 0
        # An older start may still run beside this one and only the newest writes; a saved step writes unfenced.
        fence = start_fence(key, started) if saved is None else None
        result = None if saved is None else ModelStepResult.model_validate(saved)
        return cls(number, local, RunJournal(store, step_input.run_id, fence), result)

    def check_not_lost(self, agent: Agent) -> None:
        """Stop a local step that was lost with its worker more often than its ``maximum_attempts``."""
        if not self.local:
            return
        limit = (agent.model_step_activity or MODEL_STEP_DEFAULTS).maximum_attempts
        if self.number > limit:
            raise ApplicationError(
                f"The model step was lost with its worker {limit} times in a row "
                "(it ran as a local activity and never finished).",
                type="WorkerLost",
                non_retryable=True,
            )
