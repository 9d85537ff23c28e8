"""A server killed right after a change keeps the change's record: the intent is written before the change is sent,
so the record exists (``pending``) although the process died before it could record how the change ended."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client, WorkflowExecutionDescription, WorkflowExecutionStatus

from tempo_agents.audit import AuditQuery, read_chain, verify_chain
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent
from tests.support.polling import until

_SERVER = """
import asyncio, os, signal, sys
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from tempo_agents import App
from tempo_agents.server.serving import ApiServer
from tests.support.http_api import parity_agent

async def main():
    target, store_url, queue = sys.argv[1:4]
    client = await Client.connect(target, data_converter=pydantic_data_converter)
    app = App(agents=[parity_agent(id="doomed")], client=client, store=store_url, task_queue=queue)
    store = app.store
    append = store.append_audit

    async def append_or_die(entries):
        if any(entry.completes for entry in entries):  # the change was made: die before recording how it ended
            os.kill(os.getpid(), signal.SIGKILL)
        return await append(entries)

    store.append_audit = append_or_die
    server = ApiServer(app, port=0)
    await server.start()
    print(server.url, flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


async def test_a_server_killed_after_a_cancel_still_has_its_record(make_app: AppFactory, client: Client) -> None:
    app = make_app([parity_agent(id="doomed")])
    async with running_worker(app):
        waiting = await app.generate("doomed", "charge", memory={"thread": "t-k", "resource": "acme"})
        assert waiting.finish_reason == "suspended"
        server = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(_SERVER), client.service_client.config.target_host,
             app.store.url, app.task_queue],
            stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2],
        )  # fmt: skip
        try:
            assert server.stdout is not None
            url = (await asyncio.to_thread(server.stdout.readline)).strip()
            assert url.startswith("http://127.0.0.1:"), url
            async with httpx.AsyncClient(timeout=60) as http:
                with pytest.raises(httpx.HTTPError):  # the server dies before it answers
                    await http.post(f"{url}/api/runs/{waiting.run_id}/cancel", headers={"user-agent": "ops/1"})
            assert await asyncio.to_thread(server.wait, 60) == -9
        finally:
            if server.poll() is None:
                server.kill()
        handle = app.client.get_workflow_handle(waiting.run_id)

        async def cancelled() -> WorkflowExecutionDescription | None:
            outcome = await handle.describe()
            return outcome if outcome.status == WorkflowExecutionStatus.CANCELED else None

        outcome = await until(cancelled, timeout=30)  # the cancel was sent: the run ends cancelled
        assert outcome.status == WorkflowExecutionStatus.CANCELED

    [kept] = await app.store.audit_actions(AuditQuery(action="cancel"))
    shown = kept.wire()
    assert (shown["target"], shown["tenant"], shown["outcome"], shown["userAgent"]) == (
        waiting.run_id,
        "acme",
        "pending",
        "ops/1",
    )
    assert (await verify_chain(read_chain(app.store.audit_chain))).broken is None
