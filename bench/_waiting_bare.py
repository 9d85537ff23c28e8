"""The bare-Temporal side of ``bench/waiting_10k.py``: a hand-written workflow doing the same wait as the ``waiter``
agent (a model-step activity, a tool activity, then a wait for a signal that answers, a tool activity, a model-step
activity; no-op activities), and its worker, run as a subprocess::

    python bench/_waiting_bare.py HOST:PORT TASK_QUEUE
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

READY = "bare worker polling"


@activity.defn(name="bench.waiting.noop")
async def noop(step: int) -> int:
    return step


@workflow.defn(name="BenchBareWait")
class BareWait:
    def __init__(self) -> None:
        self.answer: Any = None
        self.asked = False

    @workflow.run
    async def run(self, name: str) -> Any:
        timeout = timedelta(seconds=30)
        await workflow.execute_activity(noop, 0, start_to_close_timeout=timeout)
        await workflow.execute_activity(noop, 1, start_to_close_timeout=timeout)
        self.asked = True
        await workflow.wait_condition(lambda: self.answer is not None)
        await workflow.execute_activity(noop, 2, start_to_close_timeout=timeout)
        await workflow.execute_activity(noop, 3, start_to_close_timeout=timeout)
        return {"run": name, "answer": self.answer}

    @workflow.signal
    def answer_it(self, answer: Any) -> None:
        self.answer = answer

    @workflow.query
    def waiting(self) -> bool:
        return self.asked and self.answer is None


async def _serve(address: str, task_queue: str) -> None:
    client = await Client.connect(address)
    async with Worker(client, task_queue=task_queue, workflows=[BareWait], activities=[noop]):
        print(READY, flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1], sys.argv[2]))
