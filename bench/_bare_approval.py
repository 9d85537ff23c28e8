"""The bare-Temporal floor of ``bench/capacity.py``: a hand-written workflow with the agent run's shape, no-op
activities one after the other (as many as the agent run scheduled before its approval), a wait for a signal that
answers, then the rest of the activities. What Temporal needs at the least for a run that waits for a person."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from temporalio import activity, workflow

__all__ = ["ANSWER_SIGNAL", "BareApproval", "BareShape", "noop"]

ANSWER_SIGNAL = "answer"


@dataclass
class BareShape:
    before: int
    """Activities before the wait."""
    after: int
    """Activities after the answer."""


@activity.defn(name="bench.capacity.noop")
async def noop(step: int) -> int:
    return step


@workflow.defn(name="BenchBareApproval")
class BareApproval:
    def __init__(self) -> None:
        self.answered = False

    @workflow.run
    async def run(self, shape: BareShape) -> int:
        timeout = timedelta(seconds=60)
        for step in range(shape.before):
            await workflow.execute_activity(noop, step, start_to_close_timeout=timeout)
        await workflow.wait_condition(lambda: self.answered)
        for step in range(shape.after):
            await workflow.execute_activity(noop, shape.before + step, start_to_close_timeout=timeout)
        return shape.before + shape.after

    @workflow.signal(name=ANSWER_SIGNAL)
    def answer(self) -> None:
        self.answered = True
