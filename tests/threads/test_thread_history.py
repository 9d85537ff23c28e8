"""A thread's workflow keeps a short history: idle, it continues as new (carrying its done runs), so a thread used
for a long time is many short histories; what it lists survives."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType

from tempo_agents import App
from tempo_agents.agent.threads import thread_workflow_id
from tests.conftest import continue_as_new_server, running_worker
from tests.support.thread_agents import Gate, gated_agent

MEMORY = {"thread": "long", "resource": "u1"}


async def test_an_idle_thread_continues_as_new_and_keeps_its_runs(tmp_path: Path) -> None:
    async with continue_as_new_server(20) as env:
        app = App(
            agents=[gated_agent(Gate(opened=True))],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with running_worker(app):
            texts = [await (await app.stream("chat", f"m{n}", memory=MEMORY)).text for n in range(6)]
            assert texts == [f"m{n} after {n + 1}" for n in range(6)]
            handle = env.client.get_workflow_handle(thread_workflow_id(app.task_queue, "u1", "long"))
            for _ in range(500):  # a run's finish chunk comes just before its workflow ends
                view = await app.thread("long", resource_id="u1")
                if len(view.done) == 6:
                    break
                await asyncio.sleep(0.02)
            run_id: str | None = (await handle.describe()).run_id
            lengths = []
            while run_id:  # back along the chain of continue-as-new
                history = await env.client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()
                lengths.append(len(history.events))
                if lengths[1:]:
                    assert history.events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
                run_id = history.events[0].workflow_execution_started_event_attributes.continued_execution_run_id
            assert len(lengths) >= 2 and max(lengths) < 60, lengths
            view = await app.thread("long", resource_id="u1")
            assert len(view.done) == 6
            assert len(view.messages) == 12
        await app.store.close()
