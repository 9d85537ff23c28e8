"""A suspended run survives stopping the worker and the Temporal server, and is resumed from another process."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from tempo_agents.worker.dev_server import DevServer, free_port

APP_MODULE = """
from typing import Any
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool


async def charge(data: dict[str, Any], ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        return await ctx.suspend({"phase": "confirm", "amount": data["amount"]})
    return {"charged": data["amount"] if ctx.resume_data["confirmed"] else 0}


def build(store: str, task_queue: str, client: Any = None) -> App:
    model = ScriptedModel(
        [
            ScriptedResponse(text="Charging.", tool_calls=[ScriptedToolCall("charge", {"amount": 990})]),
            ScriptedResponse(text="Charged 990."),
        ]
    )
    tool = create_tool(id="charge", description="Charges a card", execute=charge)
    return App(agents=[Agent(id="pay", model=model, tools={"charge": tool})], store=store, task_queue=task_queue,
               client=client)
"""


async def connect(server: DevServer) -> Client:
    return await Client.connect(server.address, data_converter=pydantic_data_converter)


async def test_suspended_run_survives_worker_and_server_restart(tmp_path: Path) -> None:
    (tmp_path / "restart_app.py").write_text(APP_MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        restart_app: Any = importlib.import_module("restart_app")
    finally:
        sys.path.remove(str(tmp_path))
    db = tmp_path / "temporal.db"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    task_queue = f"tq-{uuid.uuid4()}"
    port = free_port()

    async with DevServer(db_filename=db, port=port) as server:
        app = restart_app.build(store, task_queue, await connect(server))
        async with app.worker():
            first = await app.agent("pay").generate("charge me")
    assert first.finish_reason == "suspended"

    resumer = textwrap.dedent(
        f"""
        import asyncio, json, os, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from temporalio.client import Client
        from temporalio.contrib.pydantic import pydantic_data_converter
        import restart_app
        async def main():
            client = await Client.connect({f"127.0.0.1:{port}"!r}, data_converter=pydantic_data_converter)
            app = restart_app.build({store!r}, {task_queue!r}, client)
            result = await app.agent("pay").resume_generate({{"confirmed": True}}, run_id={first.run_id!r})
            sys.stdout.write(json.dumps({{"reason": result.finish_reason, "text": result.text,
                                          "results": [r.payload.result for r in result.tool_results]}}))
            sys.stdout.flush()
            os._exit(0)
        asyncio.run(main())
        """
    )
    async with DevServer(db_filename=db, port=port) as server:
        app = restart_app.build(store, task_queue, await connect(server))
        async with app.worker():
            completed = await asyncio.to_thread(
                subprocess.run, [sys.executable, "-c", resumer], capture_output=True, text=True, timeout=90
            )
            assert completed.returncode == 0, completed.stderr
            outcome = await app.client.get_workflow_handle(first.run_id).result()
        journal = [entry for entry in await app.store.read_chunks(first.run_id, 0, 10_000)]
        transcript = await app.store.get_transcript(first.run_id)

    assert json.loads(completed.stdout) == {"reason": "stop", "text": "Charged 990.", "results": [{"charged": 990}]}
    assert outcome["finishReason"] == "stop"
    assert [e.offset for e in journal] == list(range(len(journal)))
    finishes = [e.chunk["payload"]["stepResult"]["reason"] for e in journal if e.chunk["type"] == "finish"]
    assert finishes == ["suspended", "stop"]
    assert [(e.step, e.message["role"]) for e in transcript] == [
        (-1, "user"),
        (0, "assistant"),
        (0, "tool"),
        (1, "assistant"),
    ]
    assert transcript[2].message["content"][0]["result"] == {"charged": 990}
