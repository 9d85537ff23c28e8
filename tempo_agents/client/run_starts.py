"""Starting an App's runs: a run without memory as a workflow of its own (eager while few starts overlap, its
``start`` chunk journaled by the client), a run with memory as a message to its thread's workflow (ARCHITECTURE.md,
"The path of a run" and "Threads")."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Protocol

from temporalio.client import Client
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.agent.agent import Agent
from tempo_agents.agent.local_activities import workflow_task_timeout
from tempo_agents.client.forking import FORK_MEMO
from tempo_agents.client.run_options import THREAD_STRATEGY_OPTION
from tempo_agents.client.run_probes import run_closed_probe, thread_run_probe
from tempo_agents.errors import ConfigurationError, ErasedRunError, ThreadBusyError
from tempo_agents.journal.start_chunk import journal_start
from tempo_agents.models.messages import MessageInput
from tempo_agents.store.base import Store
from tempo_agents.streams import AgentStream
from tempo_agents.threads import remember_thread, send_to_thread
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import RunInput
from tempo_agents.workflows.thread_payloads import DEFAULT_THREAD_STRATEGY, ThreadRun, ThreadStrategy

__all__ = ["EAGER_STARTS_IN_FLIGHT", "RunStarter", "StartingApp"]

EAGER_STARTS_IN_FLIGHT = 2
"""Starts from one App ask for eager execution while fewer than this many are in flight. An eager start hands the
run's first workflow task back in the start's own answer, to a worker of this process: the fastest start when
starts are few (one round trip, no dispatch through the task queue). When many overlap, each eager answer is
slower to come back (start RPC p95 89 ms against 58 ms at 20 clients, ``bench/vs_reference.py``), so the rest
go through the task queue: the first chunk of a run under load comes about a third sooner."""


class StartingApp(Protocol):
    """What starting runs needs of an App: its client, store and task queue, and how it prepares a run."""

    task_queue: str

    @property
    def client(self) -> Client: ...

    @property
    def store(self) -> Store: ...

    def prepare_run(
        self, agent: Agent, messages: MessageInput, options: Mapping[str, Any]
    ) -> tuple[RunInput, list[SearchAttributePair[str]]]: ...


def _seconds(timeout: timedelta | None) -> float | None:
    return None if timeout is None else timeout.total_seconds()


class RunStarter:
    """Starts the runs of one App and counts its starts in flight (:data:`EAGER_STARTS_IN_FLIGHT`)."""

    def __init__(self, app: StartingApp) -> None:
        self.app = app
        self._starting = 0  # starts in flight from this App

    async def start(
        self, agent: Agent, messages: MessageInput, options: Mapping[str, Any], sent_by: str | None = None
    ) -> AgentStream:
        """Start a run of ``agent`` (through its thread's workflow when it has memory) and return its stream."""
        app = self.app
        run_input, attributes = app.prepare_run(agent, messages, options)
        run_id = run_input.run_id
        chosen_id = bool(options.get("run_id") or agent.default_options.get("run_id"))
        if chosen_id and await app.store.is_erased(run_id):
            raise ErasedRunError(run_id)  # nothing more is written under an erased run's id
        fork = run_input.options.fork
        fork_of = None if fork is None else (fork.run_id, fork.step)
        memo = {} if fork is None else {FORK_MEMO: {"runId": fork.run_id, "step": fork.step}}
        if run_input.options.memory is not None:
            strategy = options.get(THREAD_STRATEGY_OPTION) or agent.default_options.get(THREAD_STRATEGY_OPTION)
            run = ThreadRun(
                run_input=run_input,
                task_queue=app.task_queue,
                search_attributes={pair.key.name: pair.value for pair in attributes},
                task_timeout_seconds=_seconds(workflow_task_timeout(agent)),
                memo=memo,
            )
            return await self._send_to_thread(run, strategy or DEFAULT_THREAD_STRATEGY, sent_by, fork_of)
        start_run = self._start_workflow(run_input, attributes, workflow_task_timeout(agent), memo)
        if chosen_id:
            # A run id chosen by the caller may be taken: journal nothing until the run exists.
            await start_run
            start = await journal_start(app.store, run_id, agent.id, fork_of)
        else:
            # A fresh id is nobody else's: the start chunk is written while the run starts (if it fails to start,
            # the chunk stays unseen: no one has the id), and the first chunk need not wait for both in turn.
            _, start = await asyncio.gather(start_run, journal_start(app.store, run_id, agent.id, fork_of))
        known = start if start is not None and start.offset == 0 else None  # the stream need not read it back
        return AgentStream(app.store, run_id, probe=run_closed_probe(app.client, run_id), known=known)

    async def _send_to_thread(
        self, run: ThreadRun, strategy: ThreadStrategy, sent_by: str | None, fork_of: tuple[str, int] | None
    ) -> AgentStream:
        """A run on a memory thread: its thread's workflow decides what the message does (ARCHITECTURE.md)."""
        app = self.app
        outcome = await send_to_thread(app.client, app.task_queue, run, strategy, sent_by)
        memory = run.run_input.options.memory
        assert memory is not None
        if outcome.outcome == "rejected":
            raise ThreadBusyError(
                f'thread "{memory.thread}" has an active run "{outcome.active_run_id}"; nothing was started '
                "(thread_strategy reject)",
                active_run_id=outcome.active_run_id,
            )
        if outcome.outcome == "duplicate":
            raise WorkflowAlreadyStartedError(run.run_id, AGENT_RUN_WORKFLOW)
        known = None
        if outcome.outcome == "started":
            start, _ = await asyncio.gather(
                journal_start(app.store, run.run_id, run.run_input.agent_id, fork_of),
                remember_thread(app.store, run, outcome),
            )
            known = start if start is not None and start.offset == 0 else None
        else:
            await remember_thread(app.store, run, outcome)
        offset = 0
        if outcome.outcome == "steered":
            offset = await self._journal_end(outcome.run_id)
        probe = thread_run_probe(app.client, app.task_queue, outcome.run_id, memory.thread, memory.resource)
        stream = AgentStream(app.store, outcome.run_id, offset=offset, probe=probe, known=known)
        stream.thread_outcome = outcome
        return stream

    async def _journal_end(self, run_id: str) -> int:
        offset = 0
        while batch := await self.app.store.read_chunks(run_id, offset, 1000):
            offset = batch[-1].offset + 1
        return offset

    async def _start_workflow(
        self,
        run_input: RunInput,
        attributes: list[SearchAttributePair[str]],
        task_timeout: timedelta | None,
        memo: Mapping[str, Any] | None = None,
    ) -> None:
        eager = self._starting < EAGER_STARTS_IN_FLIGHT
        self._starting += 1
        try:
            await self.app.client.start_workflow(
                AgentRunWorkflow.run,
                run_input,
                id=run_input.run_id,
                task_queue=self.app.task_queue,
                search_attributes=TypedSearchAttributes(attributes),
                task_timeout=task_timeout,
                memo=dict(memo) if memo else None,
                request_eager_start=eager,
                # A run's id names its journal: a closed run's id is never started again (Temporal's default would
                # allow it once its minimal reuse interval, 1 s on the dev server, has passed).
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            )
        except RPCError as error:
            if error.status == RPCStatusCode.INVALID_ARGUMENT and "search attribute" in error.message.lower():
                names = ", ".join(key.name for key in search_attributes.ALL)
                raise ConfigurationError(
                    f"the Temporal namespace lacks tempo-agents' search attributes ({names}, all Keyword). "
                    "The embedded dev server registers them; on a cluster run for each: "
                    "temporal operator search-attribute create --name <name> --type Keyword"
                ) from error
            raise
        finally:
            self._starting -= 1
