"""Usage is counted once per model step across a SIGKILLed worker and a restarted dev server.

The worker is killed right after the step's transaction commits (its saved outcome and its usage together) and
before Temporal hears of the result, so the step's activity is retried: it answers from the saved outcome and the
counters are not added to again, and the budget is reached exactly where it would be without the kill. A run that
waits for a raise keeps waiting across a dev server restart, and is answered after it.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from tempo_agents.store.sqlite import SQLiteStore
from tempo_agents.worker.dev_server import DevServer, free_port
from tests.support.worker_processes import MakeWorkerProcesses, replace_dead_workers

pytestmark = pytest.mark.timeout(180)

APP = """
import os
import signal
from datetime import timedelta
from pathlib import Path

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.journal import keys
from tempo_agents.store.sqlite import SQLiteStore

KILLED = Path(__file__).with_name("killed")
STEP = Usage(input_tokens=60, output_tokens=40, total_tokens=100)
_record = SQLiteStore.record


async def record(self, run_id, entries, writes, outcome=None, **more):
    offsets = await _record(self, run_id, entries, writes, outcome, **more)
    if outcome is not None and outcome.key == keys.model_step_outcome(1) and not KILLED.exists():
        KILLED.write_text("after the commit of step 1")
        os.kill(os.getpid(), signal.SIGKILL)  # committed; Temporal never hears of the result
    return offsets


# The workers only: the test process imports this module as its client, and its store must stay whole.
if os.environ.get("TEMPO_AGENTS_TESTS_WORKER_PROCESS"):
    SQLiteStore.record = record


async def lookup(data: dict) -> str:
    return f"found {data['n']}"


responses = [ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"n": n})], usage=STEP) for n in range(7)]
model = ScriptedModel([*responses, ScriptedResponse(text="All found.", usage=STEP)], model_id="priced")
agent = Agent(
    id="counted",
    model=model,
    tools={"lookup": create_tool(id="lookup", description="Looks up", execute=lookup)},
    model_step_activity=ActivityOptions(
        heartbeat_timeout=timedelta(seconds=2), retry_initial_interval=timedelta(milliseconds=100)
    ),
    default_options={"max_steps": 20},
)
app = App(agents=[agent], prices={"scripted/priced": {"input": 2.5, "output": 10.0}})
"""


async def test_a_step_retried_after_its_commit_is_counted_once(
    tmp_path: Path, worker_processes: MakeWorkerProcesses
) -> None:
    unpatched = SQLiteStore.record
    processes = worker_processes(APP, "budget_loss_app")
    assert SQLiteStore.record is unpatched  # the fault is injected into the worker processes alone
    app = processes.app
    workers = [processes.start() for _ in range(2)]
    try:
        stream = await app.agent("counted").stream(
            "find them", memory={"thread": "t", "resource": "acme"}, budget={"run": {"tokens": 350}}
        )
        done = asyncio.create_task(stream.result())
        deaths = await replace_dead_workers(processes, workers, done)
        result = await done
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    counted = await app.store.usage_counters([("run:" + result.run_id, "total"), ("resource:acme", "total")])
    await app.store.close()

    assert (tmp_path / "killed").exists() and deaths == 1
    # 100 tokens a step: the 4th step brings the run to 400 >= 350, so step 4 is not sent. Counted twice, step 1
    # would have brought the run to 400 a step earlier.
    assert result.finish_reason == "budget-exceeded"
    [stop] = [c.model_dump(by_alias=True)["data"] for c in result.chunks if c.type == "data-budget-exceeded"]
    assert (stop["step"], stop["used"]) == (4, 400)
    assert counted == {
        ("run:" + result.run_id, "total"): (400, 2_200_000),
        ("resource:acme", "total"): (400, 2_200_000),
    }


RESTART_APP = """
from typing import Any

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool

STEP = Usage(input_tokens=60, output_tokens=40, total_tokens=100)


async def lookup(data: dict) -> str:
    return f"found {data['n']}"


def build(store: str, task_queue: str, client: Any = None) -> App:
    responses = [ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"n": n})], usage=STEP) for n in range(3)]
    model = ScriptedModel([*responses, ScriptedResponse(text="All found.", usage=STEP)])
    tool = create_tool(id="lookup", description="Looks up", execute=lookup)
    agent = Agent(id="counted", model=model, tools={"lookup": tool})
    budget = {"run": {"tokens": 200}, "on_exceeded": "wait"}
    return App(agents=[agent], store=store, task_queue=task_queue, client=client, budget=budget)
"""


async def connect(server: DevServer) -> Client:
    return await Client.connect(server.address, data_converter=pydantic_data_converter)


async def test_a_run_waiting_for_its_budget_survives_a_dev_server_restart(tmp_path: Path) -> None:
    (tmp_path / "budget_restart_app.py").write_text(RESTART_APP)
    sys.path.insert(0, str(tmp_path))
    try:
        module: Any = importlib.import_module("budget_restart_app")
    finally:
        sys.path.remove(str(tmp_path))
    db = tmp_path / "temporal.db"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    task_queue = f"tq-{uuid.uuid4()}"
    port = free_port()

    async with DevServer(db_filename=db, port=port) as server:
        app = module.build(store, task_queue, await connect(server))
        async with app.worker():
            first = await app.agent("counted").generate("find them")
        await app.store.close()
    assert first.finish_reason == "suspended"

    async with DevServer(db_filename=db, port=port) as server:
        app = module.build(store, task_queue, await connect(server))
        async with app.worker():
            waiting = await app.budget_usage(first.run_id)
            listed = await app.list_suspended_runs()
            done = await (await app.answer_budget(first.run_id, budget={"run": {"tokens": 1_000}})).result()
            after = await app.budget_usage(first.run_id)
        await app.store.close()

    assert waiting.waiting is not None and waiting.waiting.stop.used == 200
    assert [r.run_id for r in listed.runs] == [first.run_id]
    assert done.finish_reason == "stop" and done.text == "All found."
    [run_total] = [c for c in after.counters if c.scope == "run"]
    assert run_total.tokens == 400  # four steps, each counted once
