"""Calls that go on as child workflows: ``agent-<key>`` (a sub-agent's run) and ``workflow-<key>``.

The tool-call activity decides (hooks, validation, approval) and answers ``delegate`` with a
:class:`ChildStart`; from here the run starts the child, and the child-relay activity records how the call
stands (the child's result, its failure, or the call it waits on). Resuming the call sends the answer to the
child. The parent's history grows by a handful of events per call and per resume, never per child step
(ARCHITECTURE.md, "Sub-agents and workflows as tools").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, ChildWorkflowError, FailureError

from tempo_agents.activity_options import ActivityOptions
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.activity_names import CHILD_RELAY
from tempo_agents.workflows.child_payloads import (
    CHILD_RESUME_SIGNAL,
    ChildOutcome,
    ChildResume,
    ChildStart,
    ChildSuspension,
)
from tempo_agents.workflows.payloads import (
    ChildRelayInput,
    ChildRelayResult,
    Resolution,
    ResumeRequest,
    ToolCallInput,
    ToolCallResult,
)

__all__ = ["CHILD_RELAY_DEFAULTS", "ChildCalls"]

CHILD_RELAY_DEFAULTS = ActivityOptions(start_to_close_timeout=timedelta(days=1))
"""A relay lasts as long as the child's segment runs (it heartbeats every second)."""


@dataclass
class _Child:
    start: ChildStart
    handle: workflow.ChildWorkflowHandle[Any, Any] | None
    cursor: int = 0
    waiting_on: str | None = None
    """The child's call that the parent's suspended call stands for (sub-agents)."""


class ChildCalls:
    """The calls of one run that go on as child workflows, by tool call id."""

    def __init__(self) -> None:
        self._children: dict[str, _Child] = {}
        self._suspensions: dict[str, ChildSuspension] = {}

    def owns(self, call_input: ToolCallInput) -> bool:
        """Whether this is the answer to a call whose child waits."""
        return call_input.resolution is not None and call_input.call.tool_call_id in self._children

    def running(self) -> dict[str, str]:
        """The child run id of each call whose child runs or waits (the ``children`` query)."""
        return {call_id: child.start.child_run_id for call_id, child in self._children.items()}

    def closed_alone(self, waiting: Iterable[str]) -> dict[str, Resolution]:
        """Waiting calls whose child closed without an answer from this run (it was answered directly, or its
        own deadline passed): taken up again to record what the child did."""
        closed: dict[str, Resolution] = {}
        for call_id in waiting:
            child = self._children.get(call_id)
            if child is not None and child.handle is not None and child.handle.done():
                closed[call_id] = Resolution(action="resume")
        return closed

    def suspended(self, suspension: ChildSuspension) -> None:
        """A workflow tool waits for a person (its ``tempo_agents.child_suspended`` signal)."""
        self._suspensions[suspension.child_run_id] = suspension

    async def start(self, call_input: ToolCallInput, start: ChildStart) -> ToolCallResult:
        """Start the call's child and relay it until it ends or waits."""
        call_id = call_input.call.tool_call_id
        info = workflow.info()
        attributes: list[SearchAttributePair[Any]] = []
        if start.kind == "agent":
            agent_id = start.input.get("agentId") if isinstance(start.input, dict) else None
            attributes = [SearchAttributePair(search_attributes.STATUS, "running")]
            if isinstance(agent_id, str):
                attributes.append(SearchAttributePair(search_attributes.AGENT_ID, agent_id))
        relayed = call_input.model_copy(update={"outbox": type(call_input.outbox)()})
        try:
            handle = await workflow.start_child_workflow(
                start.workflow,
                start.input,
                id=start.child_run_id,
                task_queue=start.task_queue or info.task_queue,
                parent_close_policy=workflow.ParentClosePolicy.REQUEST_CANCEL,
                search_attributes=TypedSearchAttributes(attributes) if attributes else None,
                static_summary=f"{call_input.call.tool_name} of {call_input.run_id}",
                task_timeout=None
                if start.task_timeout_seconds is None
                else timedelta(seconds=start.task_timeout_seconds),
            )
        except ChildWorkflowError as error:
            return await self._relay(relayed, start, 0, ChildOutcome(status="error", error=str(error)))
        child = self._children[call_id] = _Child(start=start, handle=handle)
        return await self._follow(relayed, child)

    async def resume(self, call_input: ToolCallInput) -> ToolCallResult:
        """Send the answer to the waiting child, then relay it until it ends or waits again."""
        child = self._children[call_input.call.tool_call_id]
        resolution = call_input.resolution
        assert resolution is not None
        child_id = child.start.child_run_id
        external = workflow.get_external_workflow_handle(child_id)
        try:
            if child.start.kind == "agent":
                await external.signal("resume", _child_request(resolution, child.waiting_on))
            else:
                await external.signal(CHILD_RESUME_SIGNAL, ChildResume(data=_resume_data(resolution)).to_wire())
        except FailureError:
            pass  # the child closed on its own (its deadline passed, or it was answered directly): it says how
        return await self._follow(call_input, child)

    async def _follow(self, call_input: ToolCallInput, child: _Child) -> ToolCallResult:
        call_id = call_input.call.tool_call_id
        try:
            if child.start.kind == "agent":
                relayed = await self._relay_result(call_input, child.start, child.cursor, None)
                child.cursor = relayed.cursor
                child.waiting_on = relayed.child_tool_call_id
                result = relayed.result
                if result.status != "suspended" and child.handle is not None:
                    await _settled(child.handle)
            else:
                outcome = await self._watch_workflow(child)
                result = await self._relay(call_input, child.start, 0, outcome)
        except (ActivityError, CancelledError, asyncio.CancelledError):
            # The run is cancelled, or the relay's workers kept dying (the call ends with a tool error): the
            # child is not waited for any more, so it stops too.
            del self._children[call_id]
            if child.handle is not None:
                child.handle.cancel()
            raise
        if result.status != "suspended":
            del self._children[call_id]
        return result

    async def _watch_workflow(self, child: _Child) -> ChildOutcome:
        handle = child.handle
        child_id = child.start.child_run_id
        assert handle is not None
        await workflow.wait_condition(lambda: handle.done() or child_id in self._suspensions)
        suspension = self._suspensions.pop(child_id, None)
        if suspension is not None and not handle.done():
            return ChildOutcome(status="suspended", suspension=suspension)
        try:
            return ChildOutcome(status="result", result=handle.result())
        except ChildWorkflowError as error:
            return ChildOutcome(status="failed", error=_failure_message(error))

    async def _relay(
        self, call_input: ToolCallInput, start: ChildStart, cursor: int, outcome: ChildOutcome | None
    ) -> ToolCallResult:
        return (await self._relay_result(call_input, start, cursor, outcome)).result

    async def _relay_result(
        self, call_input: ToolCallInput, start: ChildStart, cursor: int, outcome: ChildOutcome | None
    ) -> ChildRelayResult:
        options = CHILD_RELAY_DEFAULTS
        attempts = (call_input.call.activity or options).maximum_attempts
        result: ChildRelayResult = await workflow.execute_activity(
            CHILD_RELAY,
            ChildRelayInput(call=call_input, start=start, cursor=cursor, outcome=outcome),
            result_type=ChildRelayResult,
            start_to_close_timeout=options.start_to_close_timeout,
            heartbeat_timeout=options.heartbeat_timeout,
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            retry_policy=options.model_copy(update={"maximum_attempts": attempts}).retry_policy(),
            summary=f"{call_input.call.tool_name} (step {call_input.step}): {start.child_run_id}",
        )
        return result


def _child_request(resolution: Resolution, child_call: str | None) -> ResumeRequest:
    """The parent's answer as the child's ``resume`` request (to the call its suspension stands for)."""
    if resolution.action in ("approve", "decline"):
        return ResumeRequest(
            tool_call_id=child_call,
            action=resolution.action,
            reason=resolution.reason,
            answered_by=resolution.answered_by,
            answered_by_groups=resolution.answered_by_groups or [],
        )
    return ResumeRequest(
        tool_call_id=child_call,
        action="resume",
        data=resolution.data,
        answered_by=resolution.answered_by,
        answered_by_groups=resolution.answered_by_groups or [],
    )


def _resume_data(resolution: Resolution) -> Any:
    if resolution.action in ("approve", "decline"):
        return {"approved": resolution.action == "approve"}
    return resolution.data


async def _settled(handle: workflow.ChildWorkflowHandle[Any, Any]) -> None:
    """Wait for a sub-agent whose journal says it ended to close (its failure is already recorded)."""
    with contextlib.suppress(ChildWorkflowError):
        await handle


def _failure_message(error: ChildWorkflowError) -> str:
    cause: BaseException | None = error.cause
    while cause is not None and not isinstance(cause, ApplicationError) and cause.__cause__ is not None:
        cause = cause.__cause__
    if isinstance(cause, ApplicationError):
        return cause.message
    return str(cause or error)
