"""A worker SIGKILLed while its thread's queue holds runs loses none: the thread's workflow and the queue are in
Temporal, so the next worker starts each queued run in turn, and every message is answered once, in order."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.worker_processes import MakeWorkerProcesses, replace_dead_workers

pytestmark = pytest.mark.timeout(180)

APP = """
import asyncio
import os
import signal
from pathlib import Path

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse

HERE = Path(__file__).parent


async def respond(request):
    while not (HERE / "gate").exists():
        await asyncio.sleep(0.05)
    users = [m.text for m in request.messages if m.role == "user"]
    marker = HERE / f"killed-{users[-1]}"
    if users[-1] in ("m0", "m2") and not marker.exists():
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return ScriptedResponse(text=f"{users[-1]} after {len(users)}")


app = App(agents=[Agent(id="chat", model=ScriptedModel(respond))])
"""

MEMORY = {"thread": "t", "resource": "r"}


async def test_queued_runs_survive_sigkilled_workers(tmp_path: Path, worker_processes: MakeWorkerProcesses) -> None:
    processes = worker_processes(APP, "thread_loss_app")
    app = processes.app
    workers = [processes.start()]
    try:
        streams = [await app.stream("chat", f"m{n}", memory=MEMORY) for n in range(5)]
        outcomes = [s.thread_outcome.outcome if s.thread_outcome else None for s in streams]
        assert outcomes == ["started", "queued", "queued", "queued", "queued"]
        (tmp_path / "gate").touch()  # the first run's model step now kills its worker, later the third's
        done = asyncio.ensure_future(asyncio.gather(*(s.text for s in streams)))
        deaths = await replace_dead_workers(processes, workers, done)
        texts = await done
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    assert deaths == 2
    assert texts == [f"m{n} after {n + 1}" for n in range(5)]
    messages = await app.store.get_thread_messages("t", "r")
    texts_in_thread = ["".join(p.get("text", "") for p in m["content"]) for m in messages]
    assert texts_in_thread == [text for n in range(5) for text in (f"m{n}", f"m{n} after {n + 1}")]
