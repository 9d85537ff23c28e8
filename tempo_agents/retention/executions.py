"""Deleting a Temporal execution (with its history), harmlessly when it is gone already."""

from __future__ import annotations

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

__all__ = ["delete_execution"]


async def delete_execution(client: Client, workflow_id: str, run_id: str = "") -> bool:
    """Delete an execution (the workflow id's latest when ``run_id`` is empty); ``False`` when it was gone already.
    Temporal deletes it in the background: it stops being described within moments."""
    request = DeleteWorkflowExecutionRequest(
        namespace=client.namespace, workflow_execution=WorkflowExecution(workflow_id=workflow_id, run_id=run_id)
    )
    try:
        await client.workflow_service.delete_workflow_execution(request)
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True
