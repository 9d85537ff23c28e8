"""The queries of one run, typed: each names the workflow's own query method, so no caller asks by a string."""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import WorkflowHandle, WorkflowQueryFailedError

from tempo_agents.models.usage import Usage
from tempo_agents.tasks import TaskItem
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import Answer, BudgetState, PendingCall, RunSnapshot

__all__ = ["RunQueries"]


class RunQueries:
    """``RunQueries(client.get_workflow_handle(run_id)).pending()``: what a run answers without changing.

    A query of a closed run replays it on a worker; a worker from before a query existed fails it with
    ``WorkflowQueryFailedError``, which callers that read old runs catch.
    """

    def __init__(self, handle: WorkflowHandle[Any, Any]) -> None:
        self.handle = handle

    async def status(self) -> str:
        return await self.handle.query(AgentRunWorkflow.status)

    async def mode(self) -> str | None:
        return await self.handle.query(AgentRunWorkflow.mode)

    async def steps(self) -> int:
        return await self.handle.query(AgentRunWorkflow.steps)

    async def usage(self) -> Usage:
        return await self.handle.query(AgentRunWorkflow.usage)

    async def tasks(self) -> list[TaskItem]:
        return await self.handle.query(AgentRunWorkflow.tasks)

    async def answers(self) -> list[Answer]:
        return await self.handle.query(AgentRunWorkflow.answers)

    async def calls_running(self) -> int:
        return await self.handle.query(AgentRunWorkflow.calls_running)

    async def children(self) -> dict[str, str]:
        return await self.handle.query(AgentRunWorkflow.children)

    async def pending(self) -> list[PendingCall]:
        return await self.handle.query(AgentRunWorkflow.pending)

    async def settled_pending(self, settle_seconds: float) -> list[PendingCall]:
        """The calls the run waits on, asked again for up to ``settle_seconds`` while the run reports calls still
        running and nothing pending (a suspension reaches the journal a moment before the workflow hears of it)."""
        deadline = asyncio.get_running_loop().time() + settle_seconds
        while True:
            pending = await self.pending()
            if pending or asyncio.get_running_loop().time() >= deadline:
                return pending
            try:
                running = await self.calls_running()
            except WorkflowQueryFailedError:  # a run started before the query existed
                return pending
            if not running:  # the calls may have ended between the two queries: ask once more
                return await self.pending()
            await asyncio.sleep(0.02)

    async def budget(self) -> BudgetState:
        return await self.handle.query(AgentRunWorkflow.budget)

    async def snapshot(self) -> RunSnapshot:
        return await self.handle.query(AgentRunWorkflow.snapshot)
