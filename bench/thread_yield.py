"""What a run that yields its thread while it waits for a person costs: the messages sent meanwhile, and the answer.

    python bench/thread_yield.py [--threads 20] [--db-file PATH] [--stock-server]

One App (SQLite store in a temporary directory, a worker in this process, an agent whose model answers at once and
pays only after an approval) on the embedded dev server, ``--threads`` threads of each kind, one message at a time:

- message to a thread whose run waits (yielded) next to a message to a thread with no run (its one run ended): the
  duration of ``app.generate(...)`` (the call returns with the answer), p50 and p95;
- the answer: ``approve_tool_call`` until the continuation's text, for a run that yielded (its continuation asks the
  thread for its turn and reads what was said meanwhile: one message here) next to one that held its thread
  (``waiting_holds_thread=True``, nothing said meanwhile).

The last line is quotable::

    thread_yield: message p50 waiting=..ms idle=..ms (..x) p95 waiting=..ms idle=..ms answer p50 yielded=..ms
    held=..ms (..x) p95 yielded=..ms held=..ms
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `bench`, from any directory

from bench._common import (
    add_dev_server_arguments,
    bench_parser,
    busy_warning,
    median,
    out,
    quantile,
    run_as_module,
    start_server,
)
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest


def _agent() -> Agent:
    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text == "Pay Bob" and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"to": "Bob"})])
        return ScriptedResponse(text="ok")

    pay = create_tool(id="pay", description="Pays", execute=lambda data: "paid", require_approval=True)
    return Agent(id="payments", model=ScriptedModel(script), tools={"pay": pay})


async def _timed(call: Callable[[], Awaitable[object]]) -> float:
    began = time.perf_counter()
    await call()
    return (time.perf_counter() - began) * 1000


async def _settled(app: App, thread: str, *, waiting: int) -> None:
    """Until the thread has no active run and ``waiting`` runs wait (each run tells its thread as it ends or waits)."""
    while True:
        view = await app.thread(thread, resource_id="bench")
        if not view.active and not view.queued and len(view.waiting) == waiting:
            return
        await asyncio.sleep(0.01)


async def bench(args: argparse.Namespace) -> int:
    began = time.perf_counter()
    env = await start_server(args.db_file, stock=args.stock_server)
    try:
        with tempfile.TemporaryDirectory() as folder:
            app = App(
                agents=[_agent()],
                store=f"sqlite:///{Path(folder) / 'store.db'}",
                task_queue=f"bench-{uuid.uuid4()}",
                client=env.client,
            )
            async with app.worker():
                for n in range(3):  # warm-up
                    await app.generate("payments", "hi", memory={"thread": f"warm-{n}", "resource": "bench"})
                waiting_runs: dict[str, str] = {}
                out(f"setting up {args.threads} threads with a waiting run, {args.threads} idle ones")
                for n in range(args.threads):
                    first = await app.generate("payments", "Pay Bob", memory={"thread": f"w-{n}", "resource": "bench"})
                    waiting_runs[f"w-{n}"] = first.run_id
                    await app.generate("payments", "hi", memory={"thread": f"i-{n}", "resource": "bench"})
                    await _settled(app, f"w-{n}", waiting=1)
                    await _settled(app, f"i-{n}", waiting=0)

                out("messages, one at a time, alternating")
                to_waiting: list[float] = []
                to_idle: list[float] = []
                for n in range(args.threads):
                    for thread, times in ((f"w-{n}", to_waiting), (f"i-{n}", to_idle)):

                        async def message(thread: str = thread) -> object:
                            return await app.generate("payments", "hi", memory={"thread": thread, "resource": "bench"})

                        times.append(await _timed(message))
                        await _settled(app, thread, waiting=1 if thread.startswith("w-") else 0)

                out("answers, one at a time, alternating")
                held_runs: dict[str, str] = {}
                for n in range(args.threads):
                    memory = {"thread": f"h-{n}", "resource": "bench"}
                    held = await app.generate("payments", "Pay Bob", memory=memory, waiting_holds_thread=True)
                    held_runs[f"h-{n}"] = held.run_id
                yielded: list[float] = []
                held_times: list[float] = []
                for n in range(args.threads):
                    for run_id, times in ((waiting_runs[f"w-{n}"], yielded), (held_runs[f"h-{n}"], held_times)):

                        async def answer(run_id: str = run_id) -> object:
                            stream = await app.approve_tool_call("payments", run_id=run_id)
                            return await stream.text

                        times.append(await _timed(answer))
    finally:
        await env.shutdown()
    rows = [("message to a thread whose run waits", to_waiting), ("message to a thread with no run", to_idle)]
    rows += [("answer, run yielded its thread", yielded), ("answer, run held its thread", held_times)]
    for name, times in rows:
        out(f"  {name:<38} p50 {median(times):7.1f} ms  p95 {quantile(times, 0.95):7.1f} ms")
    load = os.getloadavg()[0]
    out(f"load average (1 min) at the end: {load:.2f}" + (busy_warning() if load > 2.5 else ""))
    out(f"total time: {time.perf_counter() - began:.0f} s")
    messages = (
        f"message p50 waiting={median(to_waiting):.1f}ms idle={median(to_idle):.1f}ms "
        f"({median(to_waiting) / median(to_idle):.2f}x) p95 waiting={quantile(to_waiting, 0.95):.1f}ms "
        f"idle={quantile(to_idle, 0.95):.1f}ms"
    )
    answers = (
        f"answer p50 yielded={median(yielded):.1f}ms held={median(held_times):.1f}ms "
        f"({median(yielded) / median(held_times):.2f}x) p95 yielded={quantile(yielded, 0.95):.1f}ms "
        f"held={quantile(held_times, 0.95):.1f}ms"
    )
    out(f"thread_yield: {messages} {answers}")
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--threads", type=int, default=20, help="threads of each kind (default 20)")
    add_dev_server_arguments(parser)
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("need --threads >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("thread_yield")
