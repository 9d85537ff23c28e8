"""A thread's workflow continues as new with its state sealed: every run of its chain holds only ciphertext, and the
thread goes on as before."""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType

from tempo_agents import App
from tempo_agents.threads.operations import thread_workflow_id
from tests.conftest import continue_as_new_server, running_worker
from tests.support.encryption import keyring, payload_key_ids
from tests.support.polling import until
from tests.support.thread_agents import Gate, gated_agent

MEMORY = {"thread": "sealed-long", "resource": "u-sealed"}


async def all_done(app: App) -> bool:
    """Whether the thread has done its six runs."""
    return len((await app.thread("sealed-long", resource_id="u-sealed")).done) == 6


async def test_a_thread_continues_as_new_sealed(tmp_path: Path) -> None:
    async with continue_as_new_server(20) as env:
        app = App(
            agents=[gated_agent(Gate(opened=True))],
            store=f"sqlite:///{tmp_path / 'store.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
            encryption_keys=keyring("k1"),
        )
        async with running_worker(app):
            texts = [await (await app.stream("chat", f"m{n}", memory=MEMORY)).text for n in range(6)]
            assert texts == [f"m{n} after {n + 1}" for n in range(6)]
            handle = env.client.get_workflow_handle(thread_workflow_id(app.task_queue, "u-sealed", "sealed-long"))
            await until(lambda: all_done(app), timeout=30)
            run_id: str | None = (await handle.describe()).run_id
            chain = []
            while run_id:  # back along the chain of continue-as-new, read without the codec
                events = list((await env.client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()).events)
                chain.append(events)
                run_id = events[0].workflow_execution_started_event_attributes.continued_execution_run_id
        await app.store.close()
    assert len(chain) >= 2
    continued = [e for e in chain[1][-1:] if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW]
    assert payload_key_ids(continued) == {"k1"}  # the state carried to the next run
    assert all(payload_key_ids(events) == {"k1"} for events in chain)
