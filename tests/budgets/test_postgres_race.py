"""Two worker processes on PostgreSQL race model steps of four runs on one resource: every step checks the
resource's counter before it calls the model and adds to it when it commits, so the steps in flight when the limit
is crossed can each finish, and the resource never spends more than the limit plus those steps (README, "Budgets").

The race is forced: each run's first step passes its check, then waits inside the model until all four have
arrived, so all four are in flight before any commits; each run's tool then waits until all four first steps have
committed, so the second steps all check after the limit was crossed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.postgres_server import PostgresServer
from tests.support.worker_processes import MakeWorkerProcesses

pytestmark = pytest.mark.timeout(180)

RUNS = 4
STEP_TOKENS = 100
LIMIT = 250

APP = f"""
import asyncio
from pathlib import Path

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool

ARRIVED = Path(__file__).with_name("arrived")
LOOKED_UP = Path(__file__).with_name("looked-up")
STEP = Usage(input_tokens=60, output_tokens=40, total_tokens={STEP_TOKENS})


async def respond(request):
    if request.step == 0:  # every run's first step waits here until all {RUNS} are in flight
        ARRIVED.mkdir(exist_ok=True)
        (ARRIVED / request.run_id).touch()
        while len(list(ARRIVED.iterdir())) < {RUNS}:
            await asyncio.sleep(0.02)
    return ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {{"n": request.step}})], usage=STEP)


async def lookup(data: dict, ctx) -> str:
    # A tool runs after its step committed: waiting here for all {RUNS} keeps every second step's check after
    # every first step's count, so what passes a check is the first steps alone, however the machine schedules.
    LOOKED_UP.mkdir(exist_ok=True)
    (LOOKED_UP / ctx.run_id).touch()
    while len(list(LOOKED_UP.iterdir())) < {RUNS}:
        await asyncio.sleep(0.02)
    return "found"


agent = Agent(
    id="racer",
    model=ScriptedModel(respond),
    tools={{"lookup": create_tool(id="lookup", description="Looks up", execute=lookup)}},
    default_options={{"max_steps": 20}},
)
app = App(agents=[agent], budget={{"resource": {{"total": {{"tokens": {LIMIT}}}}}}})
"""


async def test_two_workers_racing_on_one_resource_overshoot_by_at_most_the_steps_in_flight(
    tmp_path: Path, worker_processes: MakeWorkerProcesses, postgres_server: PostgresServer
) -> None:
    url = postgres_server.create_database()
    processes = worker_processes(APP, "budget_race_app", store=url)
    app = processes.app
    workers = [processes.start() for _ in range(2)]
    try:
        streams = [
            await app.agent("racer").stream("go", memory={"thread": f"t-{n}", "resource": "acme"}) for n in range(RUNS)
        ]
        results = await asyncio.wait_for(asyncio.gather(*(s.result() for s in streams)), 120)
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    counted = await app.store.usage_counters([("resource:acme", "total")])
    await app.store.close()

    assert len(list((tmp_path / "arrived").iterdir())) == RUNS
    assert [r.finish_reason for r in results] == ["budget-exceeded"] * RUNS
    assert [r.steps for r in results] == [2] * RUNS  # one step each, then the stopped one
    spent = counted[("resource:acme", "total")][0]
    # All four first steps passed the check at 0 tokens: the bound is reached, and never passed.
    assert spent == RUNS * STEP_TOKENS
    assert spent - LIMIT < RUNS * STEP_TOKENS
