"""Records the history of a run started by a schedule, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_scheduled PREFIX`` writes ``PREFIXscheduled-run.json``: a schedule's triggered run,
whose input carries no run id (the workflow takes its workflow id as its run id), with a tool call and an answer.
Never re-record to make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes

HERE = Path(__file__).parent


async def main(prefix: str) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    model = ScriptedModel(
        [
            ScriptedResponse(text="Counting.", tool_calls=[ScriptedToolCall("count", {}, id="count-1")]),
            ScriptedResponse(text="Three open tickets."),
        ]
    )
    count = create_tool(id="count", description="Counts open tickets", execute=lambda data: {"open": 3})
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[Agent(id="reporter", model=model, tools={"count": count})],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with app.worker():
            schedule = await app.schedule("reporter", "How many tickets are open?", every="1h", schedule_id="report")
            await schedule.trigger()
            while not (view := await schedule.describe()).recent_runs:
                await asyncio.sleep(0.1)
            handle = env.client.get_workflow_handle(view.recent_runs[0].run_id)
            await handle.result()
            await schedule.delete()
            history = await handle.fetch_history()
            (HERE / f"{prefix}scheduled-run.json").write_text(history.to_json())
            print(f"wrote tests/histories/{prefix}scheduled-run.json ({len(history.events)} events)")
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
