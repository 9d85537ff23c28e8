"""Erasure on request, seen from outside: after ``erase``, the store's file (and its write-ahead log), the stock
``temporal`` CLI and the API hold nothing of the erased resource, thread or run, and every other tenant's runs are
untouched. Running it again is harmless."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.erasure import ErasureScope
from tempo_agents.errors import ConfigurationError, ErasedRunError
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker
from tests.support.cli_processes import cli, cli_output
from tests.support.gated_models import DeafTool
from tests.support.http_api import served
from tests.support.polling import until
from tests.support.store_contents import store_contents
from tests.support.temporal_cli import listed_runs, show_history

pytestmark = pytest.mark.timeout(600)  # each erasure may wait a minute for Temporal (see erasing.py)

ACME = ("ACME-PROMPT-7731", "ACME-INVOICE-7731")  # a prompt, and the tool result it leads to
GLOBEX = ("GLOBEX-PROMPT-2208", "GLOBEX-INVOICE-2208")


def _agent() -> Agent:
    """``lookup <x>`` looks up an invoice (its result names the customer's invoice); ``pay <x>`` waits for approval."""

    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user":
            verb, _, customer = last.text.partition(" ")
            return ScriptedResponse(tool_calls=[ScriptedToolCall(verb, {"customer": customer})])
        return ScriptedResponse(text=f"done: {last.text}")

    def lookup(data: dict[str, Any]) -> str:
        return str(data["customer"]).replace("PROMPT", "INVOICE")

    tools = {
        "lookup": create_tool(id="lookup", description="Looks up an invoice", execute=lookup),
        "pay": create_tool(id="pay", description="Pays", execute=lambda data: "paid", require_approval=True),
    }
    return Agent(id="billing", model=ScriptedModel(script), tools=tools)


def _runs_of(task_queue: str, resource: str) -> str:
    """The visibility query of the resource's runs on ``task_queue`` (the dev server is shared with the other tests
    of this process, whose runs may name the same resource)."""
    return f"TaskQueue = '{task_queue}' AND TempoAgentResource = '{resource}'"


async def _unlisted(client: Client, task_queue: str, resource: str) -> bool:
    """Whether visibility lists none of the resource's runs on ``task_queue``."""
    return not await listed_runs(client, _runs_of(task_queue, resource))


async def test_erasing_a_resource_leaves_nothing_of_it_and_everything_of_the_others(
    make_app: AppFactory, temporal_env: WorkflowEnvironment
) -> None:
    app = make_app([_agent()])
    acme = {"thread": "t1", "resource": "acme"}
    async with running_worker(app):
        looked_up = await app.generate("billing", f"lookup {ACME[0]}", memory=acme)
        waiting = await app.generate("billing", f"pay {ACME[0]}", memory={"thread": "t2", "resource": "acme"})
        assert waiting.finish_reason == "suspended"
        theirs = await app.generate("billing", f"lookup {GLOBEX[0]}", memory={"thread": "t1", "resource": "globex"})
        schedule = await app.schedule("billing", f"lookup {ACME[0]}", every="1h", paused=True, memory=acme)
        kept = await app.schedule("billing", f"lookup {GLOBEX[0]}", every="1h", paused=True)
        assert [secret for secret in (*ACME, *GLOBEX) if secret not in store_contents(app.store)] == []

        report = await app.erase(resource="acme")

        assert report.stopped == [waiting.run_id]  # the waiting run was still running: terminated, and said so
        assert {looked_up.run_id, waiting.run_id} <= set(report.deleted_runs)
        assert theirs.run_id not in report.deleted_runs
        assert report.deleted_schedules == [schedule.id] and report.store_rows > 0
        wire = json.dumps(report.to_wire())
        assert not any(secret in wire for secret in ACME)  # what was erased is named by id only

        store = store_contents(app.store)
        assert not any(secret in store for secret in ACME)
        assert all(secret in store for secret in GLOBEX)
        # Temporal drops a deleted run from its visibility store by a task of its own, a moment later: seconds when
        # the machine is loaded (the suite beside other work on two cores took past 20 s).
        await until(lambda: _unlisted(temporal_env.client, app.task_queue, "acme"), timeout=90)
        for run_id in (looked_up.run_id, waiting.run_id):
            code, shown = await show_history(temporal_env.client, run_id)
            assert code != 0 and ACME[0] not in shown
        globex = await listed_runs(temporal_env.client, _runs_of(app.task_queue, "globex"))
        assert [run["execution"]["workflowId"] for run in globex] == [theirs.run_id]
        assert (await app.thread("t1", resource_id="acme")).to_wire()["messages"] == []
        assert len((await app.thread("t1", resource_id="globex")).to_wire()["messages"]) == 4
        assert [view.id for view in await app.list_schedules()] == [kept.id]

        again = await app.erase(resource="acme")  # harmless: nothing runs, nothing is left in the store
        assert again.stopped == [] and again.store_rows == 0 and again.deleted_schedules == []
        assert all(secret in store_contents(app.store) for secret in GLOBEX)


async def test_erasing_a_run_and_a_thread_over_http(make_app: AppFactory, temporal_env: WorkflowEnvironment) -> None:
    app = make_app([_agent()])
    async with served(app) as http, running_worker(app):
        one = await app.generate("billing", f"lookup {ACME[0]}", memory={"thread": "t1", "resource": "acme"})
        other = await app.generate("billing", f"lookup {ACME[0]}", memory={"thread": "t2", "resource": "acme"})

        erased = await http.post("/erasure", json={"runId": one.run_id})
        assert erased.status_code == 200, erased.text
        assert erased.json()["deletedRuns"] == [one.run_id] and erased.json()["stopped"] == []
        assert (await http.get(f"/runs/{one.run_id}")).status_code == 404
        assert (await app.store.read_chunks(one.run_id)) == []
        assert (await app.store.read_chunks(other.run_id)) != []  # the same thread's other runs stay
        again = await http.post("/agents/billing/stream", json={"messages": "lookup x", "runId": one.run_id})
        assert again.status_code == 409 and again.json()["code"] == "RUN_ERASED", again.text  # its id is not reused

        by_thread = await http.post("/erasure", json={"threadId": "t2", "resourceId": "acme"})
        assert by_thread.status_code == 200 and by_thread.json()["deletedRuns"] == [other.run_id]
        assert (await http.get("/threads/t2", params={"resourceId": "acme"})).json()["messages"] == []
        assert (await app.store.read_chunks(other.run_id)) == []

        # what the dashboard's pages read holds nothing of the erased runs
        for route, params in (
            ("/dashboard/runs", {}),
            ("/runs", {"resource": "acme"}),
            ("/inbox", {}),
            ("/inbox/answered", {}),
            ("/agents/billing/suspended-runs", {"resourceId": "acme"}),
        ):
            page = await http.get(route, params=params)
            assert page.status_code == 200, (route, page.text)
            assert one.run_id not in page.text and other.run_id not in page.text, route
            assert ACME[0] not in page.text and ACME[1] not in page.text, route

        # the audit trail says what was erased, by id, and repeats none of its content
        records = (await http.get("/audit", params={"action": "erase"})).json()["records"]
        assert sorted(record["target"] for record in records) == sorted([one.run_id, "t2"])
        assert {record["outcome"] for record in records} == {"done"}
        assert not any(secret in json.dumps(records) for secret in ACME)

        for body, message in (
            ({}, "name what to erase"),
            ({"threadId": "t2"}, "with its resource"),
            ({"runId": one.run_id, "resourceId": "acme"}, "a run is named alone"),
        ):
            refused = await http.post("/erasure", json=body)
            assert refused.status_code == 400 and message in refused.json()["error"], refused.text


def test_an_erasure_must_name_what_it_erases() -> None:
    with pytest.raises(ConfigurationError, match="must not be empty"):
        ErasureScope(resource=" ")
    for scope in ({"resource": "acme\x00"}, {"resource": "acme", "thread": "\x00"}, {"run": "r\x00"}):
        with pytest.raises(ConfigurationError, match="cannot contain a NUL character"):
            ErasureScope(**scope)


BILLING_MODULE = """
from tempo_agents import App
from tests.erasure.test_erase import _agent

app = App(agents=[_agent()])
"""


async def test_the_erase_command(make_app: AppFactory, temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    app = make_app([_agent()])
    (tmp_path / "billingapp.py").write_text(BILLING_MODULE)
    common = [
        "--address", temporal_env.client.service_client.config.target_host,
        "--task-queue", app.task_queue, "--app", "billingapp:app", "--store", app.store.url,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path.cwd())])}
    async with running_worker(app):
        run = await app.generate("billing", f"lookup {ACME[0]}", memory={"thread": "t1", "resource": "acme"})
        report = json.loads(await cli_output("erase", "--run", run.run_id, *common, cwd=tmp_path, env=env))
        assert report["scope"] == {"run": run.run_id} and report["deletedRuns"] == [run.run_id]
        assert await app.store.read_chunks(run.run_id) == []
        code, _, stderr = await cli("erase", "--thread", "t1", *common, cwd=tmp_path, env=env)
        assert code == 2 and "a thread is erased with its resource" in stderr


def _slow_agent() -> Agent:
    """Each step takes a moment, so runs are in flight while the erasure works."""

    async def respond(request: ModelRequest) -> ScriptedResponse:
        await asyncio.sleep(0.05)
        asked = [message.text for message in request.messages if message.role == "user"][-1]
        if request.step < 3:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"customer": asked})])
        return ScriptedResponse(text=f"done {asked}")

    def lookup(data: dict[str, Any]) -> str:
        return str(data["customer"]).replace("PROMPT", "INVOICE")

    tool = create_tool(id="lookup", description="Looks up an invoice", execute=lookup)
    return Agent(id="billing", model=ScriptedModel(respond), tools={"lookup": tool})


async def test_an_erasure_during_a_stream_of_runs_loses_none_of_the_other_tenants(make_app: AppFactory) -> None:
    app = make_app([_slow_agent()])
    async with running_worker(app):

        async def run(tenant: str, n: int) -> tuple[str, str]:
            memory = {"thread": f"t{n % 3}", "resource": tenant}
            result = await app.generate("billing", f"{tenant.upper()}-PROMPT-{n}", memory=memory)
            return result.run_id, result.text

        theirs = [asyncio.create_task(run("globex", n)) for n in range(12)]
        ours = [asyncio.create_task(run("acme", n)) for n in range(6)]
        await asyncio.sleep(1.5)  # runs of both tenants are in flight
        report = await app.erase(resource="acme")
        kept = await asyncio.gather(*theirs)
        await asyncio.gather(*ours, return_exceptions=True)  # acme's runs were stopped, some mid-step
        await app.erase(resource="acme")  # whatever acme started after the first pass
    assert report.deleted_runs, "the erasure found acme's runs in flight"
    for n, (run_id, text) in enumerate(kept):
        assert text == f"done GLOBEX-PROMPT-{n}"
        chunks = await app.store.read_chunks(run_id)
        assert chunks[-1].chunk["type"] == "finish"
    left = store_contents(app.store)
    assert "ACME-PROMPT" not in left and "ACME-INVOICE" not in left
    assert all(f"GLOBEX-INVOICE-{n}" in left for n in range(12))


async def test_a_tool_call_that_finishes_after_its_run_was_erased_writes_nothing(make_app: AppFactory) -> None:
    """The call's activity is still working when the erasure stops its run and deletes its rows, and it does not stop
    when told to: it finishes after the erasure is done, and its result (naming the customer) is refused by the
    store instead of bringing the erased run back. A new run may not take the erased run's id either."""
    tool = DeafTool()
    secret = "ACME-SECRET-9101"
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("note", {"text": secret}, id="n-1")]), ScriptedResponse("ok")]
    )
    note = create_tool(id="note", description="Notes", execute=tool)
    app = make_app([Agent(id="noter", model=model, tools={"note": note})])
    late_writes: asyncio.Queue[BaseException | None] = asyncio.Queue()
    record = app.store.record

    async def watched(run_id: str, *args: Any, **kwargs: Any) -> list[int]:
        """The store's own record, telling the test how each write after the gate opened ended."""
        try:
            offsets = await record(run_id, *args, **kwargs)
        except BaseException as error:
            if tool.gate.is_set():
                late_writes.put_nowait(error)
            raise
        if tool.gate.is_set():
            late_writes.put_nowait(None)
        return offsets

    app.store.record = watched  # type: ignore[method-assign]
    async with running_worker(app):
        started = await app.stream("noter", "note it", memory={"thread": "t1", "resource": "acme"})
        await asyncio.wait_for(tool.reached.wait(), 60)
        report = await app.erase(resource="acme")
        assert report.stopped == [started.run_id] and secret not in store_contents(app.store)
        tool.gate.set()  # the call finishes now, after the erasure
        refused = await asyncio.wait_for(late_writes.get(), 60)
        assert isinstance(refused, ErasedRunError) and refused.run_id == started.run_id, refused
        assert secret not in store_contents(app.store)
        assert await app.store.read_chunks(started.run_id) == []
        with pytest.raises(ErasedRunError, match="nothing more is written under its id"):
            await app.stream("noter", "again", run_id=started.run_id)
        await started.aclose()
