"""Runs as the operations routes show them: found through Temporal visibility, detailed by queries."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
from typing import Any

from temporalio.client import WorkflowExecution, WorkflowExecutionStatus, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.client.app import App
from tempo_agents.client.budget_usage import read_usage
from tempo_agents.client.forking import FORK_MEMO
from tempo_agents.client.run_control import rolled_back
from tempo_agents.client.run_queries import RunQueries
from tempo_agents.errors import ConfigurationError
from tempo_agents.notifications import DELIVERIES_QUERY, DeliveryRecord, delivery_workflow_id
from tempo_agents.schedules import SCHEDULE_MEMO, SCHEDULED_BY
from tempo_agents.server.child_runs import child_runs
from tempo_agents.server.errors import ApiError
from tempo_agents.server.pending_view import iso, pending_view
from tempo_agents.server.queued_run_view import queued_run_detail
from tempo_agents.server.resuming import describe_run
from tempo_agents.store.base import Resources
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.payloads import Answer, BudgetState, RunSnapshot
from tempo_agents.workflows.thread_payloads import THREAD_WORKFLOW_ID_PREFIX
from tempo_agents.workflows.visibility_queries import TOP_RUNS, quote, runs_query

__all__ = ["RUN_STATUSES", "list_runs", "page_cursor", "page_token", "run_detail", "run_status", "run_summary"]

_CLOSED = {
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.TIMED_OUT: "timed-out",
}
_FILTERS = {
    "running": "ExecutionStatus = 'Running' AND TempoAgentStatus = 'running'",
    "suspended": "ExecutionStatus = 'Running' AND TempoAgentStatus = 'suspended'",
    "completed": "ExecutionStatus = 'Completed' AND TempoAgentStatus = 'completed'",
    "failed": "(ExecutionStatus = 'Failed' OR (TempoAgentStatus = 'failed' AND ExecutionStatus != 'Canceled'))",
    "cancelled": "ExecutionStatus = 'Canceled'",
    "terminated": "ExecutionStatus = 'Terminated'",
    "timed-out": "ExecutionStatus = 'TimedOut'",
}
RUN_STATUSES = tuple(_FILTERS)
"""The ``status`` values runs are shown with and filtered by."""


def run_status(execution_status: WorkflowExecutionStatus | None, agent_status: str | None) -> str:
    """One status from the workflow's and the run's own (``TempoAgentStatus``)."""
    if execution_status in (None, WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.CONTINUED_AS_NEW):
        return agent_status or "running"
    if execution_status in _CLOSED:
        return _CLOSED[execution_status]
    return "failed" if agent_status == "failed" else "completed"


_CURSOR_CHECK_BYTES = 8


def _cursor_check(token: bytes) -> bytes:
    return hashlib.sha256(b"tempo-agents cursor\0" + token).digest()[:_CURSOR_CHECK_BYTES]


def page_cursor(token: bytes) -> str:
    """The cursor a page hands out for Temporal's next-page token: the token behind a check of it, so that a
    made-up cursor is refused here at once instead of by Temporal (which takes seconds to refuse one)."""
    return base64.urlsafe_b64encode(_cursor_check(token) + token).decode()


def page_token(cursor: str) -> bytes | None:
    """The next-page token inside a cursor of :func:`page_cursor`, or ``None`` when it is not one."""
    try:
        raw = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return None
    check, token = raw[:_CURSOR_CHECK_BYTES], raw[_CURSOR_CHECK_BYTES:]
    if not token or not hmac.compare_digest(check, _cursor_check(token)):
        return None
    return token


def run_summary(execution: WorkflowExecution) -> dict[str, Any]:
    """A run as ``GET /runs`` lists it."""
    attributes = execution.typed_search_attributes
    return {
        "runId": execution.id,
        "agentId": attributes.get(search_attributes.AGENT_ID),
        "status": run_status(execution.status, attributes.get(search_attributes.STATUS)),
        "threadId": attributes.get(search_attributes.THREAD_ID),
        "resourceId": attributes.get(search_attributes.RESOURCE_ID),
        "startedAt": iso(execution.start_time),
        "closedAt": iso(execution.close_time),
        "forkOf": attributes.get(search_attributes.FORK_OF),
        "scheduleId": attributes.get(SCHEDULED_BY),
    }


def _search_clause(search: str) -> str:
    """Runs whose id, agent or thread starts with ``search``."""
    fields = ("WorkflowId", search_attributes.AGENT_ID.name, search_attributes.THREAD_ID.name)
    return "(" + " OR ".join(f"{field} STARTS_WITH {quote(search)}" for field in fields) + ")"


def _query(
    task_queue: str,
    status: str | None,
    agent: str | None,
    thread: str | None,
    resource: Resources,
    search: str | None = None,
    top_only: bool = False,
) -> str:
    clauses = ["ExecutionStatus != 'ContinuedAsNew'", *([TOP_RUNS] if top_only else [])]
    if search:
        clauses.append(_search_clause(search))
    if status is not None:
        if status not in _FILTERS:
            raise ApiError(
                400,
                "Invalid query parameters",
                issues=[{"field": "status", "message": f"use one of {', '.join(RUN_STATUSES)}"}],
            )
        clauses.append(_FILTERS[status])
    return runs_query(task_queue, agent_id=agent, thread_id=thread, resource_id=resource, clauses=clauses)


async def list_runs(
    app: App,
    *,
    status: str | None = None,
    agent: str | None = None,
    thread: str | None = None,
    resource: Resources = None,
    per_page: int = 20,
    cursor: str | None = None,
    search: str | None = None,
    top_only: bool = False,
) -> dict[str, Any]:
    """One page of runs, newest first, and the cursor of the next page (``None`` on the last); ``search``
    keeps the runs whose id, agent or thread starts with it; ``top_only`` leaves sub-agents' runs out."""
    query = _query(app.task_queue, status, agent, thread, resource, search, top_only)
    bad_cursor = ApiError(400, "Invalid query parameters", issues=[{"field": "cursor", "message": "bad cursor"}])
    token: bytes | None = None
    if cursor:
        token = page_token(cursor)
        if token is None:
            raise bad_cursor
    pages = app.client.list_workflows(query, page_size=per_page, next_page_token=token)
    try:
        await pages.fetch_next_page()
    except RPCError as error:  # a cursor that is base64 but no page token of Temporal's
        if token is None or error.status not in (RPCStatusCode.INVALID_ARGUMENT, RPCStatusCode.UNKNOWN):
            raise
        raise bad_cursor from None
    total = (await app.client.count_workflows(query)).count
    next_token = pages.next_page_token
    return {
        "runs": [run_summary(execution) for execution in pages.current_page or ()],
        "total": total,
        "nextCursor": page_cursor(next_token) if next_token else None,
    }


def _first_step(fork_of: dict[str, Any] | None) -> int:
    """The number a run's own step 0 has in its conversation: a fork's is the step it was forked at, else 0."""
    step = None if fork_of is None else fork_of.get("step")
    return step if isinstance(step, int) and not isinstance(step, bool) else 0


async def run_detail(app: App, run_id: str) -> dict[str, Any]:
    """A run's workflow description and its queries (``status``, ``mode``, ``steps``, ``usage``,
    ``pending``, ``tasks``, ``answers``: who answered which call). A closed run is queried too (a worker
    replays it); when no worker answers,
    ``queryError`` says why and the query fields are ``null``. A run its thread still queues is ``queued``
    (``server/queued_run_view.py``)."""
    try:
        description = await describe_run(app, run_id)
    except ApiError as error:
        queued = await queued_run_detail(app, run_id) if error.status == 404 else None
        if queued is None:
            raise
        return queued
    attributes = description.typed_search_attributes
    agent_id = attributes.get(search_attributes.AGENT_ID)
    detail: dict[str, Any] = {
        "runId": run_id,
        "agentId": agent_id,
        "status": run_status(description.status, attributes.get(search_attributes.STATUS)),
        "threadId": attributes.get(search_attributes.THREAD_ID),
        "resourceId": attributes.get(search_attributes.RESOURCE_ID),
        "startedAt": iso(description.start_time),
        "closedAt": iso(description.close_time),
        "taskQueue": description.task_queue,
        "historyLength": description.history_length,
        "children": await child_runs(app.store, run_id),
        "rolledBack": await rolled_back(app.store, run_id) if description.close_time is not None else None,
    }
    memo = await description.memo()
    origin = memo.get(FORK_MEMO)
    detail["forkOf"] = origin if isinstance(origin, dict) else None
    schedule = attributes.get(SCHEDULED_BY) or memo.get(SCHEDULE_MEMO)
    detail["scheduleId"] = schedule if isinstance(schedule, str) else None
    try:
        detail["forks"] = await app.list_forks(run_id)
    except RPCError as error:  # a namespace without TempoAgentForkOf (registered before forks existed) has none
        if error.status != RPCStatusCode.INVALID_ARGUMENT:
            raise
        detail["forks"] = []
    parent = description.parent_id
    if parent and not parent.startswith(
        THREAD_WORKFLOW_ID_PREFIX
    ):  # a child run (its id is `<parent run id>-<tool call id>`): pages link back to the call
        detail["parentRunId"] = parent
        if run_id.startswith(f"{parent}-"):
            detail["parentToolCallId"] = run_id[len(parent) + 1 :]
    handle = app.client.get_workflow_handle(run_id)
    try:
        snapshot = await asyncio.wait_for(_snapshot(handle), timeout=10)
    except (RPCError, WorkflowQueryFailedError, TimeoutError) as error:
        message = "no worker answered within 10 s" if isinstance(error, TimeoutError) else error.message
        detail.update(
            {"runStatus": None, "mode": None, "step": None, "usage": None, "pending": None, "tasks": None,
             "answers": None, "budget": None, "queryError": message}
        )  # fmt: skip
        return detail
    agent_status, answers = snapshot.status, snapshot.answers
    mode, steps, usage, pending, tasks = snapshot.mode, snapshot.steps, snapshot.usage, snapshot.pending, snapshot.tasks
    try:
        agent = app.agent(agent_id or "")
    except ConfigurationError:
        agent = None
    closed = description.status not in (None, WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.CONTINUED_AS_NEW)
    if description.status == WorkflowExecutionStatus.CANCELED:
        agent_status = "cancelled"  # the workflow records a cancelled run as failed: it was not
    detail.update(
        {
            # The workflow's own word, consistent with ``pending`` (visibility may be a moment behind).
            "status": run_status(description.status, agent_status),
            "runStatus": agent_status,
            "mode": mode,
            # Steps are numbered in the conversation: a fork's copied steps count (its own go on from its origin's).
            "step": steps + _first_step(detail["forkOf"]),
            "usage": usage.to_wire(),
            # A closed run waits for nobody, whatever calls it was waiting on when it closed.
            "pending": [] if closed else [await pending_view(agent, call) for call in pending],
            "tasks": [task.to_wire() for task in tasks],
            "answers": None if answers is None else [answer.to_wire() for answer in answers],
            "notifications": await notification_deliveries(app, run_id),
            "budget": await _budget_view(app, run_id, snapshot.budget),
        }
    )
    return detail


async def notification_deliveries(app: App, run_id: str) -> list[dict[str, Any]] | None:
    """The deliveries of the run's notification events (its delivery workflow's ``deliveries`` query): ``[]`` when
    the run sent none, ``None`` when no worker answered."""
    handle = app.client.get_workflow_handle(delivery_workflow_id(run_id))
    try:
        records = await asyncio.wait_for(handle.query(DELIVERIES_QUERY, result_type=list[DeliveryRecord]), timeout=5)
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return []
        return None
    except (WorkflowQueryFailedError, TimeoutError):
        return None
    return [record.to_wire() for record in records]


async def _budget_view(app: App, run_id: str, state: BudgetState | None) -> dict[str, Any] | None:
    """The run's usage and remaining budget: its budget (as raised), each counter, and the wait for a raise."""
    if state is None:
        return None
    at = state.waiting.since if state.waiting is not None else None
    usage = await read_usage(
        app.store, state.budget, run_id=run_id, thread=state.thread, resource=state.resource, at=at,
        waiting=state.waiting,
    )  # fmt: skip
    return usage.to_wire()


async def _snapshot(handle: WorkflowHandle[Any, Any]) -> RunSnapshot:
    """The run's figures in one query (a closed run is replayed once); a worker from before the ``snapshot``
    query answers them one by one (and ``answers`` not at all when it predates that query too)."""
    try:
        return await RunQueries(handle).snapshot()
    except WorkflowQueryFailedError:
        pass
    queries = RunQueries(handle)
    status, mode, steps, usage, pending, tasks = await asyncio.gather(
        queries.status(), queries.mode(), queries.steps(), queries.usage(), queries.pending(), queries.tasks()
    )
    try:
        answers: list[Answer] | None = await queries.answers()
    except WorkflowQueryFailedError:
        answers = None
    return RunSnapshot(
        status=status, mode=mode, steps=steps, usage=usage, pending=pending, tasks=tasks, answers=answers
    )
