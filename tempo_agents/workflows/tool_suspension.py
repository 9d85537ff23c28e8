"""How a workflow run as a tool (``workflow-<key>``) waits for a person: call :func:`wait_for_resume`.

The convention, for workflows in any language: the child signals its parent run
``tempo_agents.child_suspended`` with ``{childRunId, suspendPayload, resumeSchema}`` (its own workflow id,
what the person is shown, the JSON schema of the answer), then waits for the signal ``tempo_agents.resume``
carrying ``{data}``. The parent shows its call as ``tool-call-suspended``; resuming the call through the
parent (Python, HTTP, CLI) validates the data against ``resumeSchema`` and sends it to the child.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from tempo_agents.workflows.child_payloads import (
    CHILD_RESUME_SIGNAL,
    CHILD_SUSPENDED_SIGNAL,
    ChildResume,
    ChildSuspension,
)

__all__ = ["wait_for_resume"]


async def wait_for_resume(payload: Any = None, *, resume_schema: dict[str, Any] | None = None) -> Any:
    """Inside a workflow run as an agent's tool: show ``payload`` to a person and return their answer.

    The answer matches ``resume_schema`` when one is given (the parent refuses answers that do not).
    """
    info = workflow.info()
    if info.parent is None:
        raise ApplicationError(
            "wait_for_resume() is for workflows run as an agent's tool (it has no parent run)", non_retryable=True
        )
    answers: list[ChildResume] = []

    def receive(answer: Any) -> None:  # plain JSON: any data converter reads it
        answers.append(ChildResume.model_validate(answer))

    workflow.set_signal_handler(CHILD_RESUME_SIGNAL, receive)
    suspension = ChildSuspension(child_run_id=info.workflow_id, suspend_payload=payload, resume_schema=resume_schema)
    parent = workflow.get_external_workflow_handle(info.parent.workflow_id)
    await parent.signal(CHILD_SUSPENDED_SIGNAL, suspension.to_wire())
    await workflow.wait_condition(lambda: bool(answers))
    workflow.set_signal_handler(CHILD_RESUME_SIGNAL, None)
    return answers[0].data
