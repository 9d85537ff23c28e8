"""Records the history of a run whose waiting call has reminders and an escalation, replayed by
tests/durability/test_replay.py.

``python -m tests.histories.record_reminders PREFIX`` writes ``PREFIXreminders-escalation.json`` on the
time-skipping dev server: an approval reminded every day, escalated after two days, declined by its deadline
after three (the ``call-reminders-and-escalation`` patch: its timers, its notes journaled with the alarms by the
journal activity). Never re-record to make a failing replay pass.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
import uuid
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents._ports import free_port
from tempo_agents.notifications import NotificationSettings, WebhookChannel
from tempo_agents.worker.dev_server import find_temporal_binary
from tempo_agents.workflows import search_attributes

HERE = Path(__file__).parent


class _Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def main(prefix: str) -> None:
    env = await WorkflowEnvironment.start_time_skipping_v2(
        dev_server_existing_path=find_temporal_binary(),
        dev_server_extra_args=["--dynamic-config-value", "frontend.WorkflowTimeSkippingEnabled=true"],
        data_converter=pydantic_data_converter,
        search_attributes=search_attributes.ALL,
        ui=False,
    )
    port = free_port()
    sink = ThreadingHTTPServer(("127.0.0.1", port), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("refund", {"order": 7}, id="refund-7")]),
            ScriptedResponse(text="Not refunded."),
        ]
    )
    refund = create_tool(
        id="refund",
        description="Refunds an order",
        execute=lambda d: "refunded",
        require_approval=True,
        suspend_expires_in=timedelta(days=3),
        remind_every=timedelta(days=1),
        escalate_after=timedelta(days=2),
        escalate_to=["group:managers"],
    )
    with tempfile.TemporaryDirectory() as folder:
        app = App(
            agents=[Agent(id="refunds", model=model, tools={"refund": refund})],
            store=f"sqlite:///{folder}/store.db",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
            notifications=NotificationSettings(channels=[WebhookChannel(name="ops", url=f"http://127.0.0.1:{port}/")]),
        )
        async with app.worker():
            stream = await app.agent("refunds").stream("refund order 7", run_id="reminders-escalation")
            handle = env.client.get_workflow_handle(stream.run_id)
            await handle.result()
            history = await handle.fetch_history()
            (HERE / f"{prefix}reminders-escalation.json").write_text(history.to_json())
            print(f"wrote tests/histories/{prefix}reminders-escalation.json ({len(history.events)} events)")
    sink.shutdown()
    await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
