"""Records histories of cancelled runs, replayed by tests/durability/test_replay.py.

``python -m tests.histories.record_cancel PREFIX`` writes

- ``PREFIXcancel-waiting.json``: a run whose one call waits for approval, cancelled from outside (its abort and
  finish are written by the finish activity). ``v2-`` was recorded before a cancelled waiting run wrote its end into
  a segment of its own.
- ``PREFIXcancel-through-step.json``: a run cancelled while its one model step is inside the model, whose step goes
  on and completes after the workflow asked it to stop. ``v2-`` was recorded before such a run ended cancelled (it
  completed); ``v6-`` after (it ends cancelled, behind the ``cancellation-outlives-activities`` patch).

Never re-record to make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import uuid
from pathlib import Path

from temporalio.client import WorkflowFailureError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes
from tests.support.gated_models import DeafModel

HERE = Path(__file__).parent


async def main(prefix: str) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=find_temporal_binary(),
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    model = ScriptedModel([ScriptedResponse(tool_calls=[ScriptedToolCall("delete", {"path": "a"}, id="del-a")])])
    delete = create_tool(id="delete", description="Deletes", execute=lambda d: "deleted", require_approval=True)
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[Agent(id="approver", model=model, tools={"delete": delete})],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with app.worker():
            stream = await app.agent("approver").stream("delete", run_id="cancel-waiting")
            await stream.result()  # the call waits for approval
            handle = env.client.get_workflow_handle("cancel-waiting")
            await handle.cancel()
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
            history = await handle.fetch_history()
            (HERE / f"{prefix}cancel-waiting.json").write_text(history.to_json())
            print(f"wrote tests/histories/{prefix}cancel-waiting.json ({len(history.events)} events)")
        await _record_cancel_through_step(prefix, env, folder)
    await env.shutdown()


async def _record_cancel_through_step(prefix: str, env: WorkflowEnvironment, folder: str) -> None:
    model = DeafModel([ScriptedResponse(text="All done here.")], gated=0)
    app = App(
        agents=[Agent(id="deaf", model=model)],
        store=f"sqlite:///{folder}/through.db",
        task_queue=f"tq-{uuid.uuid4()}",
        client=env.client,
    )
    async with app.worker():
        await app.agent("deaf").stream("finish up", run_id="cancel-through-step")
        await model.reached.wait()
        handle = env.client.get_workflow_handle("cancel-through-step")
        await handle.cancel()
        await model.told.wait()  # the workflow asked the step to stop; it goes on and completes
        model.gate.set()
        with contextlib.suppress(WorkflowFailureError):
            await handle.result()
        history = await handle.fetch_history()
        (HERE / f"{prefix}cancel-through-step.json").write_text(history.to_json())
        print(f"wrote tests/histories/{prefix}cancel-through-step.json ({len(history.events)} events)")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
