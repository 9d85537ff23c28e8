"""An erasure and a thread's queue: a run the thread starts after the erasure listed the scope's executions is erased
as well, however late Temporal's list filter shows it."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.erasure import ErasureScope
from tempo_agents.erasure.executions import Execution, scope_executions
from tempo_agents.errors import ErasedRunError
from tempo_agents.models.model import ModelRequest
from tempo_agents.threads import thread_workflow_id
from tempo_agents.threads.queued_runs import QUEUED_ON_KEY
from tests.conftest import AppFactory, continue_as_new_server, running_worker
from tests.support.polling import until
from tests.support.store_contents import store_contents
from tests.support.thread_agents import Gate, gated_agent

pytestmark = pytest.mark.timeout(300)

FIRST, QUEUED = "ACME-FIRST-1902", "ACME-QUEUED-4410"
REMOVED_RESOURCE = "INITECH-7731"


class _Desk:
    """``FIRST`` asks, once its gate opens, for an approval nobody gives (its run then waits for a person
    and yields the thread); any other waits in its model step for ``hold``."""

    def __init__(self) -> None:
        self.asking, self.first_waiting, self.queued_started, self.hold = (
            Gate(),
            asyncio.Event(),
            asyncio.Event(),
            Gate(),
        )

    def agent(self) -> Agent:
        async def respond(request: ModelRequest) -> ScriptedResponse:
            asked = [message.text for message in request.messages if message.role == "user"][-1]
            if asked == FIRST:
                self.first_waiting.set()
                await self.asking.wait()
                return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"to": "acme"})])
            self.queued_started.set()
            await self.hold.wait()
            return ScriptedResponse(text=f"done {asked}")

        pay = create_tool(id="pay", description="Pays", execute=lambda data: "paid", require_approval=True)
        return Agent(id="desk", model=ScriptedModel(respond), tools={"pay": pay})


async def test_a_run_the_thread_starts_after_the_listing_is_erased_too(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scope's listing shows the thread's workflow and its first run, which holds the thread while a second
    message waits its turn. Right after the listing, the first run asks for an approval and yields the thread, which
    starts the queued run. Temporal's list filter (which shows a new run a moment later, seconds on a busy server)
    is made to lag for the whole erasure: only the thread's own history says that the queued run exists. It is
    stopped and deleted, nothing of it stays in the store, and its id takes no write more."""
    desk = _Desk()
    app = make_app([desk.agent()])
    memory = {"thread": "t1", "resource": "acme"}
    listed: list[list[Execution]] = []

    async def lagging(client: Client, scope: ErasureScope, task_queue: str) -> list[Execution]:
        if not listed:
            listed.append(await scope_executions(client, scope, task_queue))
            desk.asking.open()  # the first run yields the thread; the queued one starts
            await asyncio.wait_for(desk.queued_started.wait(), 60)
        return listed[0]

    monkeypatch.setattr("tempo_agents.erasure.erasing.scope_executions", lagging)
    async with running_worker(app):
        first = await app.stream("desk", FIRST, memory=memory)
        await asyncio.wait_for(desk.first_waiting.wait(), 60)
        queued = await app.stream("desk", QUEUED, memory=memory)
        assert queued.thread_outcome is not None and queued.thread_outcome.outcome == "queued"
        report = await app.erase(resource="acme")
        runs_listed = [
            execution.workflow_id for execution in listed[0] if not execution.workflow_id.startswith("thread-")
        ]
        assert runs_listed == [first.run_id]
        assert queued.run_id in report.stopped and first.run_id in report.stopped
        with pytest.raises(RPCError) as described:
            await app.client.get_workflow_handle(queued.run_id).describe()
        assert described.value.status == RPCStatusCode.NOT_FOUND
        left = store_contents(app.store)
        assert QUEUED not in left and FIRST not in left
        with pytest.raises(ErasedRunError):
            await app.stream("desk", "again", run_id=queued.run_id)
        desk.hold.open()
        await first.aclose()
        await queued.aclose()


async def test_a_run_taken_out_of_the_queue_before_the_thread_continued_as_new_is_erased(tmp_path: Path) -> None:
    """A run taken out of its thread's queue never ran: the one row of it the store holds is where it was queued (its
    thread and resource), under its id. The thread has since continued as new, so the history of its running
    workflow does not say the run was ever sent, its earlier one does: erasing the resource reads it and deletes the
    row."""
    gate = Gate()
    async with continue_as_new_server(20) as env:
        app = App(
            agents=[gated_agent(gate)],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        memory = {"thread": "t-removed", "resource": REMOVED_RESOURCE}
        async with running_worker(app):
            first = await app.stream("chat", "one", memory=memory)
            queued = await app.stream("chat", "two", memory=memory, run_id="removed-before-its-turn")
            assert queued.thread_outcome is not None and queued.thread_outcome.outcome == "queued"
            assert await app.cancel_queued_run("t-removed", queued.run_id, resource_id=REMOVED_RESOURCE)
            handle = env.client.get_workflow_handle(thread_workflow_id(app.task_queue, REMOVED_RESOURCE, "t-removed"))
            removed_in = (await handle.describe()).run_id
            gate.open()
            assert await first.text == "one after 1"
            for n in range(4):  # enough events for the thread to continue as new
                assert await (await app.stream("chat", f"m{n}", memory=memory)).text == f"m{n} after {n + 2}"
            await until(lambda: _continued(handle, removed_in))
            assert await app.store.saved_outcome(queued.run_id, QUEUED_ON_KEY) is not None

            report = await app.erase(resource=REMOVED_RESOURCE)
            assert queued.run_id not in report.deleted_runs  # it never had an execution
            assert await app.store.saved_outcome(queued.run_id, QUEUED_ON_KEY) is None
            assert REMOVED_RESOURCE not in store_contents(app.store)
        await app.store.close()


async def _continued(handle: WorkflowHandle[Any, Any], run_id: str) -> bool:
    return (await handle.describe()).run_id != run_id
