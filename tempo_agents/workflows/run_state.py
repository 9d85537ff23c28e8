"""The state of one agent run that every part of its workflow reads: what the run is, how far it got, the calls it
waits on and the steers it received.

Workflow state: no I/O (the patch checks are the workflow's).
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow

from tempo_agents.models.usage import Usage
from tempo_agents.workflows.payloads import CarriedState, RunInput, RunOptions
from tempo_agents.workflows.run_patches import REFUSED_RESUMES_RUN_ANEW, RESUMED_CALLS_KEEP_OPTIONS
from tempo_agents.workflows.steering import STEERING_PATCH, InterruptRequest, Steers
from tempo_agents.workflows.task_state import TaskState
from tempo_agents.workflows.waiting_calls import WaitingCalls

__all__ = ["RunState"]


@dataclass
class RunState:
    """The run's input, its progress (model steps, usage, mode, task list), its waiting calls and steers, and where
    it stands."""

    run_input: RunInput
    """The input, with the run id filled in (a scheduled run's) and the budget as people's answers raised it."""
    step: int
    """Model steps finished so far (across continue-as-new)."""
    usage: Usage
    mode: str | None
    """The agent mode the run is in (``None`` for agents without modes)."""
    tasks: TaskState
    projects_tasks: bool
    """Whether the agent shows the task list to the model (its last model step said so)."""
    calls: WaitingCalls
    """The calls that wait for a person, and the answers accepted so far."""
    steers: Steers
    """The user messages sent into the run."""
    model_step_running: int | None = None
    """The model step whose activity runs now."""
    handed_off: bool = False
    """A waiting call was handed to a later run of the thread: the run ends once its answered calls ran."""
    interrupt: InterruptRequest | None = None
    """The first interrupt received: the run stops at its next step boundary (at once while it waits for people)."""
    ended_interrupted: bool = False
    """An interrupt ended the run while it waited for people."""
    continuing: bool = False
    """The run continues as new: queued steers are carried to the next run."""

    @classmethod
    def of(cls, run_input: RunInput) -> RunState:
        """The state a run starts with: fresh, or as continue-as-new carried it. A run started by a Temporal
        Schedule has no run id in its input: its id is the workflow id the schedule gave it."""
        if not run_input.run_id:
            run_input = run_input.model_copy(update={"run_id": workflow.info().workflow_id})
        carried = run_input.carried or CarriedState(step=0, usage=Usage())
        calls = WaitingCalls(
            carried.answers,
            clock=workflow.now,
            keeps_options=lambda: workflow.patched(RESUMED_CALLS_KEEP_OPTIONS),
            refusals_counted=lambda: workflow.patched(REFUSED_RESUMES_RUN_ANEW),
        )
        return cls(
            run_input=run_input,
            step=carried.step,
            usage=carried.usage,
            mode=carried.mode if run_input.carried is not None else run_input.options.mode,
            tasks=TaskState(carried.tasks, carried.task_signal_state, carried.state_signals),
            projects_tasks=carried.projects_tasks,
            calls=calls,
            steers=Steers(carried.steers),
        )

    @property
    def carried(self) -> CarriedState:
        """What the run was started with from the run before it (continue-as-new); a fresh run's is empty."""
        return self.run_input.carried or CarriedState(step=0, usage=Usage())

    @property
    def run_id(self) -> str:
        return self.run_input.run_id

    @property
    def agent_id(self) -> str:
        return self.run_input.agent_id

    @property
    def options(self) -> RunOptions:
        return self.run_input.options

    def interrupted(self) -> bool:
        """Whether an interrupt ends the run now. An interrupt that reached a run before workers knew of it was
        ignored then, and is ignored on replay (its history has no patch marker here)."""
        if self.interrupt is not None and not workflow.patched(STEERING_PATCH):
            self.interrupt = None
        return self.interrupt is not None
