"""An answer the server drops unprocessed is sent again: the person's resume is not refused, and applies once.

When a worker takes over a run whose worker was lost, the workflow task carrying an update can end without the
workflow seeing it, and the server rejects the update with ``UnprocessedUpdate`` (nothing delivered). Here the
other side is played for real: with no worker running, a raw poller takes the workflow task that carries the resume
and completes it without processing the update, as that worker did. The real worker started afterwards receives
the resent update and the run finishes, with the call answered once.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel
from temporalio.api.enums.v1 import EventType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import PollWorkflowTaskQueueRequest, RespondWorkflowTaskCompletedRequest

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tests.conftest import AppFactory, closed_history, running_worker

POLL_TIMEOUT = 120.0
"""How long the raw poller waits for the workflow task carrying the update (the dead worker's sticky queue first
times out, then the task goes to the normal queue)."""


RESUME_PATIENCE = 120
"""Seconds the resent resume may take to be answered once a worker runs (a few on an idle machine)."""


class Confirm(BaseModel):
    confirmed: bool


async def _confirm(data: dict[str, Any], ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"amount": data["amount"]})
    return {"charged": data["amount"] if ctx.resume_data["confirmed"] else 0}


async def _complete_without_processing(app: Any) -> list[str]:
    """Poll the run's workflow tasks like a worker would and complete them without touching their messages, until one
    carries protocol messages; the names of the messages it carried. (A task left over from the worker that stopped,
    which a loaded machine may still hand out first, carries none: it is completed the same way.)"""
    service = app.client.workflow_service
    queue = TaskQueue(name=app.task_queue)
    poll = PollWorkflowTaskQueueRequest(namespace=app.client.namespace, task_queue=queue, identity="dropping-worker")
    while True:
        task = await asyncio.wait_for(service.poll_workflow_task_queue(poll), POLL_TIMEOUT)
        if not task.task_token:
            continue  # an empty answer is the long poll ending with nothing to do
        carried = [message.body.type_url.rsplit(".", 1)[-1] for message in task.messages]
        done = RespondWorkflowTaskCompletedRequest(
            namespace=app.client.namespace, task_token=task.task_token, identity="dropping-worker"
        )
        await service.respond_workflow_task_completed(done)
        if carried:
            return carried


async def test_a_resume_dropped_unprocessed_is_sent_again_and_applies_once(make_app: AppFactory) -> None:
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("confirm", {"amount": 7}, id="c-1")]),
            ScriptedResponse(text="Charged."),
        ]
    )
    tool = create_tool(id="confirm", description="Charges once confirmed", resume_schema=Confirm, execute=_confirm)
    app = make_app([Agent(id="payer", model=model, tools={"confirm": tool})])
    async with running_worker(app):
        first = await app.agent("payer").generate("charge 7")
    assert first.finish_reason == "suspended"

    resuming = asyncio.create_task(app.agent("payer").resume_generate({"confirmed": True}, run_id=first.run_id))
    carried = await _complete_without_processing(app)
    assert carried == ["Request"]  # the workflow task carried the update, and was completed without it
    assert not resuming.done()  # the server dropped it unprocessed: the client sends it again
    async with running_worker(app):
        for _ in range(RESUME_PATIENCE):
            if resuming.done():
                break
            await asyncio.sleep(1)
        history = await app.client.get_workflow_handle(first.run_id).fetch_history()
        assert resuming.done(), [EventType.Name(event.event_type) for event in history.events]
        done = resuming.result()
    assert done.finish_reason == "stop" and done.text == "Charged."
    assert [result.payload.result for result in done.tool_results] == [{"charged": 7}]

    history = await closed_history(app.client, first.run_id)
    accepted = [
        event.workflow_execution_update_accepted_event_attributes.accepted_request.meta.update_id
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]
    assert len(accepted) == 1 and accepted[0].endswith("~2")  # the resend, once; the dropped one never applied
