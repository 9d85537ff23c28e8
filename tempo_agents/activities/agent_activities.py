"""The activities of a registry, registered on workers by the plugin."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from temporalio import activity

from tempo_agents.activities._running import run_activity
from tempo_agents.activities.child_relay import run_child_relay
from tempo_agents.activities.escalation import escalated_calls
from tempo_agents.activities.finish_run import run_finish
from tempo_agents.activities.handoff import CallHandoff
from tempo_agents.activities.model_step import run_model_step
from tempo_agents.activities.run_events import notify_alarms
from tempo_agents.activities.thread_runs import remove_rolled_back, runs_waiting
from tempo_agents.activities.tool_call import run_tool_call
from tempo_agents.store.base import ChunkWrite
from tempo_agents.workflows.activity_names import (
    CHILD_RELAY,
    FINISH_RUN,
    JOURNAL,
    MODEL_STEP,
    THREAD_ROLLBACK,
    THREAD_RUNS_WAITING,
    TOOL_CALL,
)
from tempo_agents.workflows.payloads import (
    ChildRelayInput,
    ChildRelayResult,
    FinishInput,
    JournalInput,
    ModelStepInput,
    ModelStepResult,
    ToolCallInput,
    ToolCallResult,
)
from tempo_agents.workflows.thread_payloads import RunsWaitingQuery

__all__ = ["AgentActivities"]

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry


class AgentActivities:
    """Binds the activity implementations to a :class:`Registry` (agents, tools, hooks, store) and, for
    auto-resume, to whatever can take a suspended call over from another run."""

    def __init__(self, registry: Registry, handoff: CallHandoff | None = None) -> None:
        self._registry = registry
        self._handoff = handoff

    @activity.defn(name=MODEL_STEP)
    async def model_step(self, step_input: ModelStepInput) -> ModelStepResult:
        return await run_activity(run_model_step(self._registry, step_input))

    @activity.defn(name=TOOL_CALL)
    async def tool_call(self, call_input: ToolCallInput) -> ToolCallResult:
        return await run_activity(run_tool_call(self._registry, self._handoff, call_input))

    @activity.defn(name=CHILD_RELAY)
    async def child_relay(self, relay: ChildRelayInput) -> ChildRelayResult:
        return await run_activity(run_child_relay(self._registry, relay))

    @activity.defn(name=FINISH_RUN)
    async def finish_run(self, finish: FinishInput) -> None:
        await run_activity(run_finish(self._registry, finish))

    @activity.defn(name=JOURNAL)
    async def journal(self, journal_input: JournalInput) -> None:
        writes = [ChunkWrite(record.chunk, record.key) for record in journal_input.records]
        escalated = escalated_calls(journal_input.alarms)
        await run_activity(self._registry.store.record(journal_input.run_id, (), writes, waiting=escalated))
        if journal_input.alarms and journal_input.agent_id is not None:
            await run_activity(
                notify_alarms(self._registry, journal_input.run_id, journal_input.agent_id, journal_input.alarms)
            )

    @activity.defn(name=THREAD_RUNS_WAITING)
    async def thread_runs_waiting(self, query: RunsWaitingQuery) -> list[str]:
        return await run_activity(runs_waiting(self._registry.store, activity.info().task_queue, query))

    @activity.defn(name=THREAD_ROLLBACK)
    async def thread_rollback(self, query: RunsWaitingQuery) -> None:
        await run_activity(remove_rolled_back(self._registry.store, query))

    def all(self) -> list[Callable[..., Any]]:
        return [
            self.model_step,
            self.tool_call,
            self.child_relay,
            self.finish_run,
            self.journal,
            self.thread_runs_waiting,
            self.thread_rollback,
        ]
