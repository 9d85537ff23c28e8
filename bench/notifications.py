"""Notifications: how soon a person hears that a call waits, and what notifying costs a waiting run.

    python bench/notifications.py [--runs 100] [--concurrency 10]

Three phases against one embedded dev server, each with its own worker in this process and ``--runs`` runs brought
to a wait (at most ``--concurrency`` at once):

- **bare**: a bare Temporal workflow that runs one no-op activity and waits on a signal (bench/suspend_resume.py's
  baseline), the floor of "a workflow that waits";
- **off**: a tempo-agents run whose model step calls a tool that needs approval, with no notification channel;
- **on**: the same runs with a signed webhook channel to a receiver on 127.0.0.1 (tests/support's, verifying
  every signature).

For each phase: the worker process's CPU seconds per waiting run (``time.process_time`` over the phase, client
included, the same for every phase), history events per waiting run (the run's, plus its delivery workflow's when
on) and the resident memory added. Lag (on only): from the moment the client sees the run suspended
(``stream.result()`` answers ``suspended``) to the receiver holding its verified ``call.waiting`` event; negative
when the webhook came first. The last line is quotable::

    notifications: N=100 lag p50=..ms p95=..ms cpu/run bare=..ms off=..ms on=..ms (on/off ..x, on/bare ..x)
    history/run bare=.. off=.. on=.. rss/run off=..KB on=..KB
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `bench` and `tests`, from any directory

from bench._common import bench_parser, busy_warning, out, quantile, run_as_module, start_server
from bench.suspend_resume import BaselineInput, BaselineWorkflow, _waiting, baseline_worker
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.notifications import NotificationSettings, WebhookChannel
from tempo_agents.notifications.delivery_payloads import delivery_workflow_id
from tests.support.notification_receivers import WebhookReceiver, webhook_receiver

SECRET = "whsec_YmVuY2gtbm90aWZpY2F0aW9ucy1zZWNyZXQta2V5"
AGENT_ID = "bench-notify"


class TimedReceiver(WebhookReceiver):
    """Notes when each run's ``call.waiting`` event arrived (verified)."""

    def __init__(self) -> None:
        super().__init__(secrets=[SECRET])
        self.waiting_at: dict[str, float] = {}

    def answer(self, headers: dict[str, str], body: bytes, connected: Callable[[], bool] = lambda: True) -> int:
        status = super().answer(headers, body, connected)
        if status == 204:
            event = self.events[-1]
            if event["type"] == "call.waiting":
                self.waiting_at[event["runId"]] = time.perf_counter()
        return status


def agent() -> Agent:
    tool = create_tool(id="wire", description="Wires money", execute=lambda d: "wired", require_approval=True)
    model = ScriptedModel(lambda request: ScriptedResponse(tool_calls=[ScriptedToolCall("wire", {"amount": 10})]))
    return Agent(id=AGENT_ID, model=model, tools={"wire": tool})


def rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def bounded(count: int, concurrency: int, one: Callable[[int], Awaitable[None]]) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def guarded(n: int) -> None:
        async with gate:
            await one(n)

    await asyncio.gather(*(guarded(n) for n in range(count)))


async def history_events(app_client: Any, workflow_ids: list[str]) -> int:
    total = 0
    for workflow_id in workflow_ids:
        total += (await app_client.get_workflow_handle(workflow_id).describe()).history_length
    return total


async def phase_tempo(
    env: Any, directory: Path, runs: int, concurrency: int, receiver: TimedReceiver | None
) -> dict[str, Any]:
    settings = None
    if receiver is not None:
        settings = NotificationSettings(channels=[WebhookChannel(name="bench", url=receiver.url, secrets=[SECRET])])
    app = App(
        agents=[agent()],
        store=f"sqlite:///{directory / f'{uuid.uuid4()}.db'}",
        task_queue=f"bench-{uuid.uuid4()}",
        client=env.client,
        notifications=settings,
    )
    seen: dict[str, float] = {}
    async with app.worker():
        rss, cpu = rss_kb(), time.process_time()

        async def one(n: int) -> None:
            stream = await app.agent(AGENT_ID).stream("wire 10")
            result = await stream.result()
            assert result.finish_reason == "suspended", result.finish_reason
            seen[stream.run_id] = time.perf_counter()

        await bounded(runs, concurrency, one)
        if receiver is not None:
            while len(receiver.waiting_at) < runs:
                await asyncio.sleep(0.01)
        cpu = time.process_time() - cpu
        rss = rss_kb() - rss
        ids = list(seen)
        if receiver is not None:
            ids += [delivery_workflow_id(run_id) for run_id in seen]
        events = await history_events(env.client, ids)
    lags = [(receiver.waiting_at[r] - t) * 1000 for r, t in seen.items()] if receiver is not None else []
    return {"cpu": cpu / runs * 1000, "events": events / runs, "rss": rss / runs, "lags": lags}


async def phase_bare(env: Any, runs: int, concurrency: int) -> dict[str, Any]:
    task_queue = f"bare-{uuid.uuid4()}"
    ids: list[str] = []
    async with baseline_worker(env.client, task_queue):
        rss, cpu = rss_kb(), time.process_time()

        async def one(n: int) -> None:
            run_id = f"bare-{uuid.uuid4()}"
            _waiting[run_id] = asyncio.get_running_loop().create_future()
            await env.client.start_workflow(
                BaselineWorkflow.run, BaselineInput(run_id=run_id, question="ok?"), id=run_id, task_queue=task_queue
            )
            await _waiting[run_id]
            ids.append(run_id)

        await bounded(runs, concurrency, one)
        cpu = time.process_time() - cpu
        rss = rss_kb() - rss
        events = await history_events(env.client, ids)
        for run_id in ids:
            await env.client.get_workflow_handle(run_id).terminate()
    return {"cpu": cpu / runs * 1000, "events": events / runs, "rss": rss / runs}


async def bench(args: argparse.Namespace) -> int:
    out(f"notifications: {args.runs} waiting runs per phase, {args.concurrency} at once. {busy_warning()}")
    env = await start_server(None, stock=False)
    try:
        with tempfile.TemporaryDirectory() as folder:
            bare = await phase_bare(env, args.runs, args.concurrency)
            off = await phase_tempo(env, Path(folder), args.runs, args.concurrency, None)
            receiver = TimedReceiver()
            with webhook_receiver(receiver):
                on = await phase_tempo(env, Path(folder), args.runs, args.concurrency, receiver)
            assert receiver.refusals == [], receiver.refusals
    finally:
        await env.shutdown()
    lags = on["lags"]
    out(f"{'phase':<6}{'cpu ms/run':>12}{'history events/run':>20}{'rss KB/run':>12}")
    for name, figures in (("bare", bare), ("off", off), ("on", on)):
        out(f"{name:<6}{figures['cpu']:>12.1f}{figures['events']:>20.1f}{figures['rss']:>12.1f}")
    out(
        f"notifications: N={args.runs} lag p50={quantile(lags, 0.5):.0f}ms p95={quantile(lags, 0.95):.0f}ms "
        f"cpu/run bare={bare['cpu']:.1f}ms off={off['cpu']:.1f}ms on={on['cpu']:.1f}ms "
        f"(on/off {on['cpu'] / off['cpu']:.2f}x, on/bare {on['cpu'] / bare['cpu']:.2f}x) "
        f"history/run bare={bare['events']:.0f} off={off['events']:.0f} on={on['events']:.0f} "
        f"rss/run off={off['rss']:.0f}KB on={on['rss']:.0f}KB"
    )
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    parser.add_argument("--runs", type=int, default=100, help="waiting runs per phase (default 100)")
    parser.add_argument("--concurrency", type=int, default=10, help="runs brought to a wait at once (default 10)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(bench(parse_args(argv)))


if __name__ == "__main__":
    run_as_module("notifications")
