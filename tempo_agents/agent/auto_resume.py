"""Auto-resume: the user's next message on a thread resumes a suspended call through the model.

Eligible tools (those with a suspend or resume schema) get two extra model-visible fields. When the
model fills ``resumeData``, the call resumes the suspended call of an earlier run of the same thread:
that run hands the call over and ends, and this run executes the tool with the suspended call's
original input and the given ``resumeData``.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError

from tempo_agents.agent.suspended_runs import SuspendedRuns
from tempo_agents.tools.tool import Tool
from tempo_agents.workflows.payloads import HandoffAccepted, HandoffRequest, MemoryRef

__all__ = [
    "RESUME_DATA_DESCRIPTION",
    "RESUME_DATA_FIELD",
    "RUN_ID_DESCRIPTION",
    "RUN_ID_FIELD",
    "SuspendedCallHandoff",
    "SuspendedRunFinder",
    "is_eligible",
    "split_resume_fields",
    "with_resume_fields",
]

RUN_ID_FIELD = "suspendedToolRunId"
RESUME_DATA_FIELD = "resumeData"
RUN_ID_DESCRIPTION = "The runId of the suspended tool"
RESUME_DATA_DESCRIPTION = "The resumeData object created from the resumeSchema of suspended tool"


def is_eligible(tool: Tool) -> bool:
    """Tools that can suspend take part in auto-resume."""
    return tool.suspend_schema is not None or tool.resume_schema is not None


def with_resume_fields(tool: Tool, schema: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema plus ``suspendedToolRunId`` and ``resumeData``."""
    extended = copy.deepcopy(schema)
    properties = extended.setdefault("properties", {})
    properties[RUN_ID_FIELD] = {"anyOf": [{"type": "string"}, {"type": "null"}], "description": RUN_ID_DESCRIPTION}
    resume = tool.resume_schema.json_schema() if tool.resume_schema is not None else {"type": "object"}
    properties[RESUME_DATA_FIELD] = {**resume, "description": RESUME_DATA_DESCRIPTION}
    return extended


def split_resume_fields(args: Any) -> tuple[Any, str | None, Any]:
    """``(args without the two fields, suspendedToolRunId, resumeData)``."""
    if not isinstance(args, dict) or (RUN_ID_FIELD not in args and RESUME_DATA_FIELD not in args):
        return args, None, None
    rest = {k: v for k, v in args.items() if k not in (RUN_ID_FIELD, RESUME_DATA_FIELD)}
    run_id = args.get(RUN_ID_FIELD)
    return rest, run_id if isinstance(run_id, str) and run_id else None, args.get(RESUME_DATA_FIELD)


class SuspendedRunFinder(Protocol):
    """What a hand-over needs of the App: its Temporal client and the runs that wait for a person."""

    @property
    def client(self) -> Client: ...

    async def list_suspended_runs(
        self, *, thread_id: str | None = None, resource_id: str | None = None, agent_id: str | None = None
    ) -> SuspendedRuns: ...


class SuspendedCallHandoff:
    """The App's side of :class:`~tempo_agents.activities.handoff.CallHandoff`: finds the suspended call
    through visibility and asks its run to hand it over (the ``handoff`` update)."""

    def __init__(self, app: SuspendedRunFinder) -> None:
        self._app = app

    async def take_over(
        self, *, by_run_id: str, tool_call_id: str, tool_name: str, memory: MemoryRef | None, from_run_id: str | None
    ) -> HandoffAccepted:
        app = self._app
        candidates = [from_run_id] if from_run_id else []
        if not candidates and memory is not None:
            listed = await app.list_suspended_runs(thread_id=memory.thread, resource_id=memory.resource)
            candidates = [r.run_id for r in listed.runs if any(c.tool_name == tool_name for c in r.tool_calls)]
        for candidate in candidates:
            if candidate == by_run_id:
                continue
            try:
                accepted: HandoffAccepted = await app.client.get_workflow_handle(candidate).execute_update(
                    "handoff",
                    HandoffRequest(tool_name=tool_name, by_run_id=by_run_id),
                    id=f"handoff:{by_run_id}:{tool_call_id}",
                    result_type=HandoffAccepted,
                )
            except (WorkflowUpdateFailedError, RPCError):
                continue
            return accepted
        raise LookupError(f'No suspended call of tool "{tool_name}" was found on this thread to resume.')
