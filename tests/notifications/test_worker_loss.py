"""Deliveries outlive their worker: the receiver is down while a run waits, the worker (a real ``tempo-agents
worker --notifications FILE`` process) is SIGKILLed in the middle of the retries, and a new worker delivers every
event exactly once, in the run's order, once the receiver is back."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest

from tests.support.notification_receivers import WebhookReceiver, settled_deliveries, webhook_receiver
from tests.support.worker_processes import MakeWorkerProcesses

pytestmark = pytest.mark.timeout(180)

SECRET = "whsec_d29ya2VyLWxvc3Mtc2VjcmV0LWtleS0xMjM0NTY="

APP = """
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool

wipe = create_tool(id="wipe", description="Wipes a disk", execute=lambda d: "wiped", require_approval=True)
model = ScriptedModel(
    [ScriptedResponse(tool_calls=[ScriptedToolCall("wipe", {"disk": "sdb"})]), ScriptedResponse(text="Wiped.")]
)
app = App(agents=[Agent(id="wiper", model=model, tools={"wipe": wipe})])
"""


async def test_a_sigkilled_worker_loses_no_event_and_doubles_none(
    tmp_path: Path, worker_processes: MakeWorkerProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPS_SECRET", SECRET)  # the worker reads the secret from its environment
    receiver = WebhookReceiver(secrets=[SECRET])
    receiver.down = True
    with webhook_receiver(receiver):
        settings = {
            "channels": [{"type": "webhook", "name": "ops", "url": receiver.url, "secrets_env": ["OPS_SECRET"]}],
            "first_retry": 0.2,
            "longest_retry_interval": 0.5,
            "attempt_timeout": 3,
        }
        (tmp_path / "notifications.json").write_text(json.dumps(settings))
        processes = worker_processes(APP, "wipe_loss_app")
        processes.command += ["--notifications", str(tmp_path / "notifications.json")]
        app = processes.app
        worker = processes.start()
        try:
            stream = await app.agent("wiper").stream("wipe sdb")
            assert (await stream.result()).finish_reason == "suspended"
            while len(receiver.deliveries) < 3:  # the waiting event is being retried by this worker
                await asyncio.sleep(0.05)
            worker.send_signal(signal.SIGKILL)
            worker.wait()
            refused_before = len(receiver.deliveries)
            worker = processes.start()
            answer = await app.approve_tool_call("wiper", run_id=stream.run_id, answered_by="ops-lead")
            assert (await answer.result()).finish_reason == "stop"
            receiver.down = False
            records = await settled_deliveries(app, stream.run_id, 3)
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait()

    assert refused_before >= 3
    assert [e["type"] for e in receiver.events] == ["call.waiting", "call.answered", "run.finished"]
    assert len(set(receiver.ids())) == len(receiver.events) == 3
    assert receiver.events[1]["answer"]["answeredBy"] == "ops-lead"
    assert [r.status for r in records] == ["delivered"] * 3
    assert receiver.refusals == []
