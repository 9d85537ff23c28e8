"""Finding the Temporal executions of an erasure's scope: its runs, the sub-agent runs they started and their forks,
and its threads' workflows (every status, every run of each workflow id)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from temporalio.client import Client, WorkflowExecution, WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.erasure.scope import ErasureScope
from tempo_agents.threads import thread_workflow_id
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.visibility_queries import quote

__all__ = ["Execution", "describe_execution", "scope_executions", "scope_query"]

_ORIGINS_PER_QUERY = 100


@dataclass(frozen=True)
class Execution:
    """One execution: its workflow id, its run id, whether it still runs, and the thread it ran on (if any)."""

    workflow_id: str
    run_id: str
    running: bool
    thread: tuple[str, str] | None


def scope_query(scope: ErasureScope, task_queue: str) -> str:
    """The visibility query of the scope's own executions on ``task_queue`` (sub-agent runs and forks are found from
    them)."""
    if scope.run is not None:
        return f"WorkflowId = {quote(scope.run)}"
    assert scope.resource is not None
    resource = f"{search_attributes.RESOURCE_ID.name} = {quote(scope.resource)}"
    if scope.thread is not None:
        runs = f"{resource} AND {search_attributes.THREAD_ID.name} = {quote(scope.thread)}"
        thread = f"WorkflowId = {quote(thread_workflow_id(task_queue, scope.resource, scope.thread))}"
    else:
        runs = resource
        thread = f"WorkflowId STARTS_WITH {quote(thread_workflow_id(task_queue, scope.resource, ''))}"
    return f"TaskQueue = {quote(task_queue)} AND (({runs}) OR {thread})"


async def scope_executions(client: Client, scope: ErasureScope, task_queue: str) -> list[Execution]:
    """Every execution of the scope, each before the runs that came from it: the sub-agent runs it started and its
    forks (a fork copies its origin's conversation and, without a memory thread of its own, names no resource)."""
    found: dict[tuple[str, str], Execution] = {}
    queries = [scope_query(scope, task_queue)]
    while queries:
        origins = list(
            dict.fromkeys([listed.id for query in queries async for listed in _listed(client, query, found)])
        )
        queries = [
            _descendants_query(origins[start : start + _ORIGINS_PER_QUERY])
            for start in range(0, len(origins), _ORIGINS_PER_QUERY)
        ]
    return list(found.values())


def _descendants_query(origins: list[str]) -> str:
    """The runs that came from ``origins``: the sub-agent runs they started and their forks."""
    return " OR ".join(
        f"ParentWorkflowId = {quote(origin)} OR {search_attributes.FORK_OF.name} = {quote(origin)}"
        for origin in origins
    )


async def _listed(
    client: Client, query: str, found: dict[tuple[str, str], Execution]
) -> AsyncIterator[WorkflowExecution]:
    async for listed in client.list_workflows(query):
        key = (listed.id, listed.run_id)
        if key in found:
            continue
        found[key] = Execution(
            listed.id, listed.run_id, listed.status == WorkflowExecutionStatus.RUNNING, _thread(listed)
        )
        yield listed


def _thread(listed: WorkflowExecution) -> tuple[str, str] | None:
    attributes = listed.typed_search_attributes
    thread, resource = attributes.get(search_attributes.THREAD_ID), attributes.get(search_attributes.RESOURCE_ID)
    return (thread, resource) if thread is not None and resource is not None else None


async def describe_execution(client: Client, workflow_id: str, run_id: str = "") -> WorkflowExecutionDescription | None:
    """What Temporal says of the execution (the workflow id's latest when ``run_id`` is empty); ``None`` when it holds
    none."""
    try:
        return await client.get_workflow_handle(workflow_id, run_id=run_id or None).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
