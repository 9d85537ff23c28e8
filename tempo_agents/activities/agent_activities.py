"""The activities of an App, registered on workers by the plugin."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from tempo_agents.activities.finish_run import run_finish
from tempo_agents.activities.model_step import run_model_step
from tempo_agents.activities.tool_call import run_tool_call
from tempo_agents.errors import ConfigurationError, ModelError
from tempo_agents.store.base import ChunkWrite
from tempo_agents.workflows.activity_names import FINISH_RUN, JOURNAL, MODEL_STEP, TOOL_CALL
from tempo_agents.workflows.payloads import (
    FinishInput,
    JournalInput,
    ModelStepInput,
    ModelStepResult,
    ToolCallInput,
    ToolCallResult,
)

if TYPE_CHECKING:
    from tempo_agents.agent.app import App

_T = TypeVar("_T")


HEARTBEAT_SECONDS = 2.0


async def _heartbeat_while(work: Awaitable[_T]) -> _T:
    """Heartbeat every few seconds while ``work`` runs, so cancellation and dead workers are noticed."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            activity.heartbeat()

    beats = asyncio.create_task(beat())

    try:
        return await work
    finally:
        beats.cancel()


async def _fail_loudly(work: Callable[[], Awaitable[_T]]) -> _T:
    """Configuration errors cannot be fixed by retrying: fail the activity for good."""
    try:
        return await _heartbeat_while(work())
    except ConfigurationError as error:
        raise ApplicationError(error.message, type=type(error).__name__, non_retryable=True) from error
    except ModelError as error:
        delay = timedelta(seconds=error.retry_after) if error.retry_after else None
        raise ApplicationError(
            error.message, type=type(error).__name__, non_retryable=not error.retryable, next_retry_delay=delay
        ) from error


class AgentActivities:
    """Binds the activity implementations to an :class:`App` (its agents, tools, hooks and store)."""

    def __init__(self, app: App) -> None:
        self._app = app

    @activity.defn(name=MODEL_STEP)
    async def model_step(self, step_input: ModelStepInput) -> ModelStepResult:
        return await _fail_loudly(lambda: run_model_step(self._app, step_input))

    @activity.defn(name=TOOL_CALL)
    async def tool_call(self, call_input: ToolCallInput) -> ToolCallResult:
        return await _fail_loudly(lambda: run_tool_call(self._app, call_input))

    @activity.defn(name=FINISH_RUN)
    async def finish_run(self, finish: FinishInput) -> None:
        await _fail_loudly(lambda: run_finish(self._app, finish))

    @activity.defn(name=JOURNAL)
    async def journal(self, journal_input: JournalInput) -> None:
        writes = [ChunkWrite(record.chunk, record.key) for record in journal_input.records]
        await self._app.store.append_chunks(journal_input.run_id, writes)

    def all(self) -> list[Callable[..., Any]]:
        return [self.model_step, self.tool_call, self.finish_run, self.journal]
