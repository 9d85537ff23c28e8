"""Clients in processes of their own that send messages to one thread at once, for the thread race tests.

:func:`race_from_processes` starts ``processes`` spawned processes, each an App client (same store, task queue and
Temporal server as the test's App) with ``clients`` senders; every sender of every process is ready (connected, its
store open) before a multiprocessing barrier lets any of them send, then all send at once. Each sender's result is
what its thread did with the message: ``outcome`` (``started``, ``queued``, ``rejected`` ...), ``runId``,
``activeRunId``, ``position``."""

from __future__ import annotations

import asyncio
import multiprocessing
import queue
from dataclasses import dataclass
from typing import Any

from tempo_agents import App
from tempo_agents.errors import ThreadBusyError
from tests.support.thread_agents import Gate, gated_agent


@dataclass(frozen=True)
class Race:
    """Where the racing clients send: the Temporal address, the App's store and task queue, the thread."""

    address: str
    store: str
    task_queue: str
    thread: str
    resource: str
    strategy: str


async def _send_all(race: Race, messages: list[str], barrier: Any) -> list[dict[str, Any]]:
    app = App(agents=[gated_agent(Gate())], store=race.store, task_queue=race.task_queue)
    await app.connect(race.address)
    await app.store.check()
    memory = {"thread": race.thread, "resource": race.resource}
    go = asyncio.Event()

    async def send(message: str) -> dict[str, Any]:
        await go.wait()
        try:
            stream = await app.stream("chat", message, memory=memory, thread_strategy=race.strategy)
        except ThreadBusyError as error:
            return {"message": message, "outcome": "rejected", "activeRunId": error.active_run_id}
        outcome = stream.thread_outcome
        assert outcome is not None
        return {"message": message, **outcome.to_wire()}

    senders = [asyncio.create_task(send(message)) for message in messages]
    await asyncio.sleep(0)  # every sender waits on the event
    await asyncio.to_thread(barrier.wait)
    go.set()
    results = await asyncio.gather(*senders)
    await app.store.close()
    return results


def _process(race: Race, messages: list[str], barrier: Any, results: Any) -> None:
    results.put(asyncio.run(_send_all(race, messages, barrier)))


def race_from_processes(race: Race, messages_per_process: list[list[str]]) -> list[dict[str, Any]]:
    """Send each list of messages from a process of its own, every sender released at once; every result."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(messages_per_process))
    results = context.Queue()
    processes = [
        context.Process(target=_process, args=(race, messages, barrier, results)) for messages in messages_per_process
    ]
    for process in processes:
        process.start()
    gathered: list[dict[str, Any]] = []
    try:
        for _ in processes:
            gathered += results.get(timeout=120)
    except queue.Empty:
        raise AssertionError("a racing client process sent no result") from None
    finally:
        for process in processes:
            process.join(timeout=30)
    return gathered
