"""A thread's run gives its thread up while it waits only for people, and takes its turn back once answered.

A run of a memory thread that waits for people is not the thread's active run (README, "Threads"): it tells the
thread's workflow (``RUN_WAITING_SIGNAL``), which starts the next message at once. Once answered, the run asks for
the thread's turn (``RUN_ANSWERED_SIGNAL``) and waits for its go-ahead; its next model step first reads what was said
on the thread meanwhile (``ThreadCatchUp``). A run that yielded tells the thread when it ends.
``RunOptions.waiting_holds_thread=True`` keeps the thread instead.
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from temporalio import workflow
from temporalio.exceptions import FailureError

from tempo_agents.workflows.payloads import ThreadCatchUp
from tempo_agents.workflows.run_patches import RUNS_YIELD_THREADS
from tempo_agents.workflows.run_state import RunState
from tempo_agents.workflows.thread_payloads import (
    RUN_ANSWERED_SIGNAL,
    RUN_ENDED_SIGNAL,
    RUN_WAITING_SIGNAL,
    THREAD_WORKFLOW_ID_PREFIX,
    ThreadRunNote,
)

__all__ = ["ThreadTurn"]


class ThreadTurn:
    """Whether the run yielded its thread, since when it waits without it, and what its next step must catch up on."""

    def __init__(self, state: RunState) -> None:
        self._state = state
        self.yielded = state.carried.yielded_thread
        """The run yielded its thread at some point: it tells the thread when it ends."""
        self._waiting_since: datetime | None = None
        """Since when the run waits with its thread yielded (``None``: it holds its thread)."""
        self._go_ahead = False
        self.catch_up: ThreadCatchUp | None = None
        """For the next model step: the run waited with its thread yielded, and others may have spoken."""

    def go_ahead(self) -> None:
        """The thread gives the run its turn (its go-ahead signal)."""
        self._go_ahead = True

    def _thread_workflow_id(self) -> str | None:
        """The run's thread's workflow, when the run yields it while it waits (README, "Threads")."""
        parent = workflow.info().parent
        options = self._state.options
        if parent is None or not parent.workflow_id.startswith(THREAD_WORKFLOW_ID_PREFIX):
            return None
        if options.memory is None or options.waiting_holds_thread:
            return None
        return parent.workflow_id

    async def give_up(self) -> None:
        """The run waits only for people now: it tells its thread, which no longer counts it as its active run."""
        thread = self._thread_workflow_id()
        if thread is None or self._waiting_since is not None or not workflow.patched(RUNS_YIELD_THREADS):
            return
        try:
            await workflow.get_external_workflow_handle(thread).signal(
                RUN_WAITING_SIGNAL, ThreadRunNote(run_id=self._state.run_id)
            )
        except FailureError:  # no thread to yield: the run waits as a run of no thread does
            return
        self._waiting_since = workflow.now()
        self.yielded = True

    async def take_back(self) -> None:
        """Answered after it yielded its thread: ask for the thread's turn and wait for it (the thread queues the
        rest of this run like a message); the next model step first reads what was said meanwhile."""
        thread = self._thread_workflow_id()
        since = self._waiting_since
        if thread is None or since is None:
            return
        answered_at = workflow.now()
        self._waiting_since = None
        self._go_ahead = False
        try:
            await workflow.get_external_workflow_handle(thread).signal(
                RUN_ANSWERED_SIGNAL, ThreadRunNote(run_id=self._state.run_id)
            )
        except FailureError:  # its thread is gone (terminated): nothing to wait for
            self._go_ahead = True
        await workflow.wait_condition(lambda: self._go_ahead)
        self.catch_up = ThreadCatchUp(waited_since=since, answered_at=answered_at)

    async def tell_ended(self, status: str) -> None:
        """A run that yielded its thread tells it that it ended (the thread may hold no handle of it any more)."""
        thread = self._thread_workflow_id()
        if thread is None or not self.yielded:
            return
        with contextlib.suppress(FailureError):
            await workflow.get_external_workflow_handle(thread).signal(
                RUN_ENDED_SIGNAL, ThreadRunNote(run_id=self._state.run_id, status=status)
            )
