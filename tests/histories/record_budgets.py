"""Records the histories of runs with budgets, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_budgets PREFIX`` writes ``PREFIXbudget-finish.json`` (a limit reached, the run
finished with ``budget-exceeded``), ``PREFIXbudget-raised.json`` (a run that waited for its budget, raised by the
``budget`` update, then went on) and ``PREFIXbudget-ended.json`` (the same wait, ended by the person). Never re-record
to make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes

HERE = Path(__file__).parent
STEP = Usage(input_tokens=60, output_tokens=40, total_tokens=100)


def spender() -> Agent:
    responses = [
        ScriptedResponse(tool_calls=[ScriptedToolCall("lookup", {"n": n}, id=f"lookup-{n}")], usage=STEP)
        for n in range(3)
    ]
    model = ScriptedModel([*responses, ScriptedResponse(text="All found.", usage=STEP)], model_id="priced")
    tool = create_tool(id="lookup", description="Looks up", execute=lambda data: f"found {data['n']}")
    return Agent(id="spender", model=model, tools={"lookup": tool})


async def record(app: App, name: str, prefix: str, budget: dict[str, Any], answer: dict[str, Any] | None) -> None:
    run_id = f"budget-{name}"
    memory = {"thread": "t", "resource": f"tenant-{name}"}
    first = await app.agent("spender").generate("find them", run_id=run_id, memory=memory, budget=budget)
    if answer is not None:
        assert first.finish_reason == "suspended"
        await (await app.answer_budget(run_id, answered_by="ops", **answer)).result()
    handle = app.client.get_workflow_handle(run_id)
    await handle.result()
    history = await handle.fetch_history()
    (HERE / f"{prefix}budget-{name}.json").write_text(history.to_json())
    print(f"wrote tests/histories/{prefix}budget-{name}.json ({len(history.events)} events)")


async def main(prefix: str) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[spender()],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
            prices={"scripted/priced": {"input": 2.5, "output": 10.0}},
        )
        wait = {"run": {"tokens": 200}, "on_exceeded": "wait"}
        async with app.worker():
            await record(app, "finish", prefix, {"resource": {"day": {"costUsd": 0.001}}}, None)
            await record(app, "raised", prefix, wait, {"budget": {"run": {"tokens": 1000}}})
            await record(app, "ended", prefix, wait, {"end": True})
        await app.store.close()
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
