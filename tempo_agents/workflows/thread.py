"""``ThreadWorkflow``: one per memory thread, it owns the thread's queue so that at most one run is active on it.

Every message sent to a thread (``App.stream`` with ``memory``, HTTP, the CLI, an event) reaches this workflow as
the ``thread_send`` update, with update-with-start (conflict policy USE_EXISTING): whichever client, on whichever
host, sends first, Temporal orders the updates and each gets a defined outcome (``ThreadOutcome``). The workflow
starts each run as a child workflow (parent close policy ABANDON: a run outlives anything that happens to its thread's
workflow) with the run id its sender chose, learns of its end from the child's completion, and only then starts
the next queued run: a run's messages are saved to the thread before its workflow ends, so a queued run never sees
half of another's. Its history stays short: it continues as new between runs, when none is active (so no child
handle is lost), carrying its queue, which is data; a thread whose next message always arrives before its run ends
is never idle, and still continues as new. A run that waits only for people yields the thread (it tells the
workflow so by signal): it is no longer active, and once answered its continuation is queued like a message, then
told to go on. ARCHITECTURE.md, "Threads".
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

import pydantic
from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import (
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    FailureError,
    TerminatedError,
    TimeoutError,
    WorkflowAlreadyStartedError,
)

from tempo_agents.errors import TempoAgentsError
from tempo_agents.workflows import thread_limits
from tempo_agents.workflows.activity_names import (
    AGENT_RUN_WORKFLOW,
    THREAD_ROLLBACK,
    THREAD_RUNS_WAITING,
    THREAD_WORKFLOW,
)
from tempo_agents.workflows.payloads import RunInput, RunOptions
from tempo_agents.workflows.thread_payloads import (
    CANCEL_QUEUED_UPDATE,
    GO_AHEAD_SIGNAL,
    INTERRUPT_SIGNAL,
    MAX_DONE_RUNS,
    RUN_ANSWERED_SIGNAL,
    RUN_ENDED_SIGNAL,
    RUN_WAITING_SIGNAL,
    SEND_UPDATE,
    STEER_SIGNAL,
    VIEW_QUERY,
    RunsWaitingQuery,
    ThreadMessage,
    ThreadOutcome,
    ThreadRun,
    ThreadRunEntry,
    ThreadRunNote,
    ThreadState,
    ThreadView,
)

__all__ = [
    "CONTINUE_AFTER_EVENTS",
    "JUMPERS_IN_ARRIVAL_ORDER_PATCH",
    "QUEUE_FITS_PATCH",
    "RUNS_YIELD_THREADS",
    "SLIM_WAITING_PATCH",
    "ThreadWorkflow",
]

CONTINUE_AFTER_EVENTS = 2000
"""An idle thread's workflow continues as new past this many history events (or when Temporal suggests it)."""

_WAITING_CHECK_TIMEOUT = timedelta(seconds=30)

_YIELD_SIGNAL_WAIT = timedelta(seconds=30)
"""How long a message waits for the signal of a run the store shows waiting (it comes within a workflow task)."""

RUNS_YIELD_THREADS = "runs-yield-threads"
"""Patch id: a run that waits only for people yields its thread (``RUN_WAITING_SIGNAL``); messages are decided one
at a time (one that waits for an activity or a signal holds the next back), and one that would refuse, stop or steer
first waits for active runs the store shows waiting to yield. Threads begun before decide as they did."""

JUMPERS_IN_ARRIVAL_ORDER_PATCH = "thread-jumpers-in-arrival-order"
"""``interrupt`` and ``rollback`` messages queue behind the ones that jumped before them, and are told their true
position; before, each went to the head of the queue (newest first), told position 1. Asked only for such a message."""

QUEUE_FITS_PATCH = "thread-queue-fits"
"""Continue as new only with a queue that fits one payload; a larger one starts its next run first. Asked only when
the queue is too large to carry (before the patch, that continue-as-new failed its workflow task on every retry)."""

SLIM_WAITING_PATCH = "thread-carries-slim-waiting-runs"
"""Continue as new carrying of each waiting run, and of each answered run's rest in the queue, only what the thread
uses of it (``_slim``), not its messages; before, their whole input travelled, and a few waiting runs with large
messages made the carried state too large, failing continue-as-new on every retry. Asked only when such runs are
carried."""


def _slim(run: ThreadRun) -> ThreadRun:
    """What the thread uses of a run that exists already (a waiting run, or an answered run's rest): its id, agent,
    task queue and ``waiting_holds_thread``. Such a run is only signalled, listed, closed and, back in its turn, held
    as active; the thread never starts it, so its messages, other options and start settings are dropped."""
    return ThreadRun(
        run_input=RunInput(
            run_id=run.run_id,
            agent_id=run.run_input.agent_id,
            messages=[],
            options=RunOptions(waiting_holds_thread=run.run_input.options.waiting_holds_thread),
        ),
        task_queue=run.task_queue,
        continues=run.continues,
    )


def _ended_status(error: ChildWorkflowError) -> str:
    cause = error.cause
    if isinstance(cause, CancelledError):
        return "CANCELED"
    if isinstance(cause, TerminatedError):
        return "TERMINATED"
    if isinstance(cause, TimeoutError):
        return "TIMED_OUT"
    return "FAILED"


def _fits(state: ThreadState) -> bool:
    """Whether the thread's state, as continue-as-new would carry it, is small enough to travel."""
    return workflow.payload_converter().to_payload(state).ByteSize() <= thread_limits.MAX_CARRIED_QUEUE_BYTES


@workflow.defn(name=THREAD_WORKFLOW, failure_exception_types=[TempoAgentsError, pydantic.ValidationError])
class ThreadWorkflow:
    """A memory thread's queue of runs (see the module's text)."""

    @workflow.init
    def __init__(self, state: ThreadState) -> None:
        self._thread_id = state.thread_id
        self._resource_id = state.resource_id
        self._done: list[ThreadRunEntry] = list(state.done)
        self._active: dict[str, ThreadRun] = {}
        self._queue: list[ThreadRun] = list(state.queue)
        self._handles: dict[str, asyncio.Task[None]] = {}
        self._jumped: set[str] = set(state.jumped)
        """Queued runs sent with ``interrupt`` or ``rollback``: the head of the queue, in the order they arrived."""
        self._rolled_back: set[str] = set()
        """Active runs cancelled by a ``rollback`` message: their messages leave the thread before the next run."""
        self._waiting: dict[str, ThreadRun] = {run.run_id: run for run in state.waiting}
        """Runs that yielded the thread while they wait for people, by run id."""
        self._signalling: set[asyncio.Task[None]] = set()
        """Signals to runs (go-ahead) and ends told by runs still being handled: the workflow does not continue as
        new under them."""
        self._sending = asyncio.Lock()

    @workflow.run
    async def run(self, state: ThreadState) -> None:
        while True:
            await workflow.wait_condition(lambda: self._startable() or self._should_continue())
            if self._should_continue():
                await workflow.wait_condition(workflow.all_handlers_finished)
                if not self._active:
                    queue, waiting = self._queue, list(self._waiting.values())
                    if (waiting or any(run.continues for run in queue)) and workflow.patched(SLIM_WAITING_PATCH):
                        # Runs that exist already travel as what the thread uses of them (``_slim``).
                        queue = [_slim(run) if run.continues else run for run in queue]
                        waiting = [_slim(run) for run in waiting]
                    carried = ThreadState(
                        thread_id=self._thread_id,
                        resource_id=self._resource_id,
                        done=self._done,
                        queue=queue,
                        waiting=waiting,
                        jumped=[run.run_id for run in self._queue if run.run_id in self._jumped],
                    )
                    if self._queue and not _fits(carried) and workflow.patched(QUEUE_FITS_PATCH):
                        self._start(self._queue.pop(0))  # carried once the queue is short enough
                    else:
                        workflow.continue_as_new(carried)
            elif self._startable():
                self._start(self._queue.pop(0))

    def _idle(self) -> bool:
        return not self._active and not self._queue

    def _startable(self) -> bool:
        return not self._active and bool(self._queue)

    def _should_continue(self) -> bool:
        """Between runs (none active; some may be queued: they travel in the input) and the history is long."""
        info = workflow.info()
        return (
            not self._active
            and not self._signalling
            and (info.is_continue_as_new_suggested() or info.get_current_history_length() > CONTINUE_AFTER_EVENTS)
        )

    def _start(self, run: ThreadRun) -> None:
        self._jumped.discard(run.run_id)
        self._active[run.run_id] = run
        if run.continues:  # a waiting run's rest: the run exists, it waits for its turn
            self._in_background(self._go_ahead(run))
        else:
            self._handles[run.run_id] = asyncio.create_task(self._run_child(run))

    def _in_background(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._signalling.add(task)
        task.add_done_callback(self._signalling.discard)

    async def _go_ahead(self, run: ThreadRun) -> None:
        try:
            await workflow.get_external_workflow_handle(run.run_id).signal(GO_AHEAD_SIGNAL)
        except FailureError:  # it closed meanwhile (terminated): it holds the thread no longer
            await self._close(run.run_id, "TERMINATED")

    async def _run_child(self, run: ThreadRun) -> None:
        status = "COMPLETED"
        try:
            attributes = [
                SearchAttributePair(SearchAttributeKey.for_keyword(name), value)
                for name, value in run.search_attributes.items()
            ]
            handle = await workflow.start_child_workflow(
                AGENT_RUN_WORKFLOW,
                run.run_input,
                id=run.run_id,
                task_queue=run.task_queue,
                search_attributes=TypedSearchAttributes(attributes),
                task_timeout=None if run.task_timeout_seconds is None else timedelta(seconds=run.task_timeout_seconds),
                memo=run.memo or None,
                parent_close_policy=workflow.ParentClosePolicy.ABANDON,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            )
            try:
                await handle
            except ChildWorkflowError as error:
                status = _ended_status(error)
        except WorkflowAlreadyStartedError:
            status = "not-started"
        await self._close(run.run_id, status, agent_id=run.run_input.agent_id)

    async def _close(self, run_id: str, status: str, *, agent_id: str | None = None) -> None:
        """A run of the thread ended (its child handle says so, or the run itself when it had yielded the thread):
        a rolled-back run's messages leave the thread, then it is done (once)."""
        if run_id in self._rolled_back:  # its messages leave the thread before the next run reads it
            self._rolled_back.discard(run_id)
            await workflow.execute_activity(
                THREAD_ROLLBACK,
                RunsWaitingQuery(thread_id=self._thread_id, resource_id=self._resource_id, run_ids=[run_id]),
                start_to_close_timeout=_WAITING_CHECK_TIMEOUT,
            )
        known = self._active.pop(run_id, None) or self._waiting.pop(run_id, None)
        for index, queued in enumerate(self._queue):
            if queued.run_id == run_id and queued.continues:
                known = known or queued
                del self._queue[index]
                break
        self._handles.pop(run_id, None)
        if known is None and agent_id is None:  # told twice (by the run, then by its handle): recorded once
            return
        if any(done.run_id == run_id for done in self._done):
            return
        agent = known.run_input.agent_id if known is not None else agent_id or ""
        self._record_done(ThreadRunEntry(run_id=run_id, agent_id=agent, state="done", status=status))

    def _record_done(self, entry: ThreadRunEntry) -> None:
        self._done.append(entry)
        del self._done[:-MAX_DONE_RUNS]

    def _known(self, run_id: str) -> bool:
        return (
            run_id in self._active
            or run_id in self._waiting
            or any(queued.run_id == run_id for queued in self._queue)
            or any(done.run_id == run_id for done in self._done)
        )

    @workflow.update(name=SEND_UPDATE)
    async def send(self, message: ThreadMessage) -> ThreadOutcome:
        """A new message: started, queued, rejected or steered (``ThreadOutcome``), decided here, in arrival order
        (one at a time: a message that waits for an activity or a signal holds the next ones back)."""
        if not workflow.patched(RUNS_YIELD_THREADS):  # a thread begun before: its messages decided as they were
            return await self._decide(message)
        async with self._sending:
            return await self._decide(message)

    async def _decide(self, message: ThreadMessage) -> ThreadOutcome:
        run = message.run
        if self._known(run.run_id):
            return ThreadOutcome(outcome="duplicate", run_id=run.run_id)
        if self._idle():
            self._start(run)
            return ThreadOutcome(outcome="started", run_id=run.run_id)
        if message.strategy != "enqueue":  # refuse, stop or steer no run that is about to yield
            await self._await_yields()
        if self._idle():
            self._start(run)
            return ThreadOutcome(outcome="started", run_id=run.run_id)
        active_id = next(iter(self._active), None)
        if active_id is not None and run.run_input.options.auto_resume_suspended_tools:
            outcome = await self._start_beside_waiting(run, active_id)
            if outcome is not None:
                return outcome
            active_id = next(iter(self._active), None)
        strategy = message.strategy
        if strategy == "reject":
            return ThreadOutcome(outcome="rejected", run_id=run.run_id, active_run_id=active_id)
        if strategy == "steer" and active_id is not None:
            if await self._steer(run, message.sent_by, active_id):
                return ThreadOutcome(outcome="steered", run_id=active_id, active_run_id=active_id)
        elif strategy in ("interrupt", "rollback") and active_id is not None:
            return await self._jump_the_queue(run, strategy, active_id)
        if self._idle():
            self._start(run)
            return ThreadOutcome(outcome="started", run_id=run.run_id)
        self._queue.append(run)
        return ThreadOutcome(outcome="queued", run_id=run.run_id, active_run_id=active_id, position=len(self._queue))

    async def _start_beside_waiting(self, run: ThreadRun, active_id: str) -> ThreadOutcome | None:
        """A run that waits for a person still holds the thread, but a new message may resume its waiting call: the
        new run starts beside it and takes the call over (the waiting run then ends). ``None``: the active runs do
        not all wait, and the message is decided as its strategy says."""
        waiting = await workflow.execute_activity(
            THREAD_RUNS_WAITING,
            RunsWaitingQuery(thread_id=self._thread_id, resource_id=self._resource_id, run_ids=list(self._active)),
            result_type=list[str],
            start_to_close_timeout=_WAITING_CHECK_TIMEOUT,
        )
        if self._active and set(self._active) <= set(waiting):
            self._start(run)
            return ThreadOutcome(outcome="started", run_id=run.run_id, active_run_id=active_id)
        if self._idle():
            self._start(run)
            return ThreadOutcome(outcome="started", run_id=run.run_id)
        return None

    async def _steer(self, run: ThreadRun, sent_by: str | None, active_id: str) -> bool:
        """Send the message into the active run; ``False`` when the run closed meanwhile (the message then becomes a
        run of its own, in turn)."""
        target = workflow.get_external_workflow_handle(active_id)
        try:
            for sent in run.run_input.messages:
                await target.signal(STEER_SIGNAL, {"message": sent, "sent_by": sent_by})
        except FailureError:
            return False
        return True

    async def _jump_the_queue(self, run: ThreadRun, strategy: str, active_id: str) -> ThreadOutcome:
        """An ``interrupt`` or ``rollback`` message: queued ahead of the other messages, and the active runs are
        interrupted (or cancelled, their messages to leave the thread)."""
        position = 1
        if workflow.patched(JUMPERS_IN_ARRIVAL_ORDER_PATCH):
            # Behind the runs that jumped before it (the first interrupter runs first), ahead of the others.
            position = 1 + next(
                (n for n, queued in enumerate(self._queue) if queued.run_id not in self._jumped), len(self._queue)
            )
            self._jumped.add(run.run_id)
        self._queue.insert(position - 1, run)
        for running in list(self._active):
            target = workflow.get_external_workflow_handle(running)
            with contextlib.suppress(FailureError):  # it closed meanwhile: nothing to stop
                if strategy == "interrupt":
                    await target.signal(INTERRUPT_SIGNAL, {"by_run_id": run.run_id})
                else:
                    self._rolled_back.add(running)
                    await target.cancel()
        return ThreadOutcome(outcome="queued", run_id=run.run_id, active_run_id=active_id, position=position)

    async def _await_yields(self) -> None:
        """When the store says every active run waits for people and each will yield the thread, wait for their
        signals (a caller that saw a run suspend may send at once, before the run's workflow has told the thread)."""
        yielding = [run for run in self._active.values() if not run.run_input.options.waiting_holds_thread]
        if not yielding or len(yielding) != len(self._active) or not workflow.patched(RUNS_YIELD_THREADS):
            return
        waiting = await workflow.execute_activity(
            THREAD_RUNS_WAITING,
            RunsWaitingQuery(thread_id=self._thread_id, resource_id=self._resource_id, run_ids=list(self._active)),
            result_type=list[str],
            start_to_close_timeout=_WAITING_CHECK_TIMEOUT,
        )
        if set(self._active) <= set(waiting):
            with contextlib.suppress(asyncio.TimeoutError):
                await workflow.wait_condition(lambda: not set(self._active) & set(waiting), timeout=_YIELD_SIGNAL_WAIT)

    @workflow.signal(name=RUN_WAITING_SIGNAL)
    def run_waiting(self, note: ThreadRunNote) -> None:
        """An active run waits only for people now: it yields the thread, and the next queued run (or message)
        starts."""
        if note.run_id in self._active and workflow.patched(RUNS_YIELD_THREADS):
            self._waiting[note.run_id] = self._active.pop(note.run_id)

    @workflow.signal(name=RUN_ANSWERED_SIGNAL)
    def run_answered(self, note: ThreadRunNote) -> None:
        """A run that yielded was answered: its rest is queued like a message (it starts at once on an idle
        thread)."""
        run = self._waiting.pop(note.run_id, None)
        if run is not None:
            self._queue.append(run.model_copy(update={"continues": True}))
        elif note.run_id not in self._active and not self._known_queued(note.run_id):
            # a run the thread does not hold (it ended here, or never yielded here): it waits for nothing
            self._in_background(self._go_ahead_alone(note.run_id))

    async def _go_ahead_alone(self, run_id: str) -> None:
        with contextlib.suppress(FailureError):
            await workflow.get_external_workflow_handle(run_id).signal(GO_AHEAD_SIGNAL)

    def _known_queued(self, run_id: str) -> bool:
        return any(queued.run_id == run_id for queued in self._queue)

    @workflow.signal(name=RUN_ENDED_SIGNAL)
    def run_ended(self, note: ThreadRunNote) -> None:
        """A run that yielded the thread ended. While the thread holds the run's child handle, the handle says so
        (after a continue-as-new it holds none)."""
        if note.run_id not in self._handles:
            self._in_background(self._close(note.run_id, note.status or "COMPLETED"))

    @send.validator
    def _check_send(self, message: ThreadMessage) -> None:
        """Refuse, before it is accepted (no trace in the history), a message the workflow could not carry: a
        workflow task that fails on a message fails on every retry that still holds it, and the thread refuses every
        other message meanwhile. Clients check the same first (``threads/operations.py``); this holds for every
        sender."""
        problem = thread_limits.message_too_large(workflow.payload_converter().to_payload(message).ByteSize())
        if problem is not None:
            raise ApplicationError(problem, type=thread_limits.MESSAGE_TOO_LARGE, non_retryable=True)
        problem = thread_limits.run_id_too_long(message.run.run_id)
        if problem is not None:
            raise ApplicationError(problem, type=thread_limits.ID_TOO_LONG, non_retryable=True)

    @workflow.update(name=CANCEL_QUEUED_UPDATE)
    def cancel_queued(self, run_id: str) -> bool:
        """Take a queued run out of the queue (it never runs; listed as done, ``removed``); ``False`` when it is not
        queued (it started already, was never sent here, or is a waiting run's rest, answered already)."""
        for index, queued in enumerate(self._queue):
            if queued.run_id == run_id and not queued.continues:  # an answered run's rest is not a message
                del self._queue[index]
                self._jumped.discard(run_id)
                self._record_done(
                    ThreadRunEntry(run_id=run_id, agent_id=queued.run_input.agent_id, state="done", status="removed")
                )
                return True
        return False

    @workflow.query(name=VIEW_QUERY)
    def view(self) -> ThreadView:
        """The thread's runs: active, queued (in the order they will run) and the last ``MAX_DONE_RUNS`` done."""
        return ThreadView(
            thread_id=self._thread_id,
            resource_id=self._resource_id,
            active=[
                ThreadRunEntry(run_id=r.run_id, agent_id=r.run_input.agent_id, state="active")
                for r in self._active.values()
            ],
            queued=[
                ThreadRunEntry(
                    run_id=r.run_id, agent_id=r.run_input.agent_id, state="queued", continues=r.continues or None
                )
                for r in self._queue
            ],
            done=list(self._done),
            waiting=[
                ThreadRunEntry(run_id=r.run_id, agent_id=r.run_input.agent_id, state="waiting")
                for r in self._waiting.values()
            ],
        )
