"""The HTTP API next to the Python client, in the same run on the same server and worker.

    python bench/http_api.py [--runs 200] [--concurrency 8] [--first-chunk 30] [--tokens 300] [--delay-ms 10]
                             [--db-file PATH] [--stock-server]
    python bench/http_api.py --auth [--requests 2000]

``--auth`` measures what authenticating a request costs instead: no token, a static token and a JWT from a local
OpenID Connect provider, per request in the same run, and the JWT's verification alone (``bench/_auth_cost.py``).

One embedded dev server, one App (SQLite store in a temporary directory) whose worker runs in this process, and
its HTTP API (``ApiServer``, uvicorn in this process, as ``tempo-agents dev`` runs it, with a bearer token). The
HTTP client (httpx) runs on its own event loop in a thread, so its parsing does not hold up the worker's loop
(it still shares the GIL); the Python client runs on the worker's loop, as an App embedded in a service would.

- **starts/s**: ``--runs`` runs of a one-word answer started ``--concurrency`` at a time. HTTP: ``POST
  /api/agents/:id/stream`` until the response's status line (the run has started; the client then closes
  the stream, which leaves the run going). Python: ``app.stream(...)`` (returns once the workflow started).
- **runs/s until every run finished, CPU per run**: the starts again (the HTTP client in a process of its own, started
  and its imports done before the clock starts), each side from an idle worker until Temporal lists none of the
  runs running: runs a second over that window, and the CPU per run of this process, of the HTTP client's and of
  the dev server (so each run's work counts on both sides).
- **first chunk**: ``--first-chunk`` runs one after the other, from the start call to the first chunk in the
  client's hands (HTTP: the first ``data:`` line of the same POST's stream; Python: ``full_stream``'s first), once
  the runs started before have finished.
- **per-token lag**: one run whose model streams ``--tokens`` distinct words ``--delay-ms`` apart; per token, the
  arrival minus the moment the model yielded it on the worker (one monotonic clock), read at once by an HTTP
  client (``GET /api/runs/:id/stream``, SSE) and by the Python client (``app.attach``). Text deltas are
  batched by the journal writer (``TEXT_FLUSH_SECONDS``), which both sides see alike.

The last line is quotable::

    http_api: starts/s http=.. python=.. (..x) runs/s-to-finish http=.. python=.. (..x)
    first-chunk p50 http=..ms python=..ms (..x) token-lag p50 http=..ms python=..ms p95 http=..ms python=..ms
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._auth_cost import auth_cost
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
from bench.capacity import Clocks, cpu_ms_per_run, dev_server_pid
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.journal.writer import TEXT_FLUSH_SECONDS
from tempo_agents.models.model import ModelEvent, ModelRequest, TextDelta
from tempo_agents.server.serving import ApiServer

TOKEN = "bench-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


class TimedModel(ScriptedModel):
    """A scripted model that records when it yields each word (the worker's side of the per-token lag)."""

    def __init__(self, text: str, delay: float) -> None:
        super().__init__(lambda request: ScriptedResponse(text=text), delta_delay=delay)
        self.emitted: dict[str, float] = {}

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async for event in super().stream(request):
            if isinstance(event, TextDelta):
                self.emitted.setdefault(event.text, time.monotonic())
            yield event


def _in_thread(coro_factory: object) -> asyncio.Future[object]:
    """Run an async function on its own event loop in a thread (the HTTP client's side)."""
    return asyncio.ensure_future(asyncio.to_thread(asyncio.run, coro_factory()))  # type: ignore[operator]


async def _http_starts(url: str, runs: int, concurrency: int) -> float:
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=60, limits=limits) as http:
        gate = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with gate, http.stream("POST", "/api/agents/quick/stream", json={"messages": "hi"}) as answer:
                assert answer.status_code == 200, answer.status_code

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(runs)))
        return runs / (time.perf_counter() - started)


async def _http_client_process(url: str, runs: int, concurrency: int) -> Callable[[], Awaitable[tuple[float, float]]]:
    """:func:`_http_starts` from another process, as an HTTP client is: its parsing takes none of the server's CPU
    or GIL. The process is started and its imports done here; the function returned has it start the runs and
    returns their rate and the process's CPU per start (ms, while it started them), so the interpreter's own start
    (about a second) is timed with neither."""
    root = Path(__file__).resolve().parent.parent
    script = (
        f"import asyncio, resource, sys; sys.path.insert(0, {str(root)!r}); from bench.http_api import _http_starts; "
        "print('READY', flush=True); sys.stdin.readline(); "
        "cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2]); before = cpu(); "
        f"rate = asyncio.run(_http_starts({url!r}, {runs}, {concurrency})); "
        f"print(rate, (cpu() - before) * 1000 / {runs})"
    )
    pipe = asyncio.subprocess.PIPE
    client = await asyncio.create_subprocess_exec(sys.executable, "-c", script, stdin=pipe, stdout=pipe)
    assert client.stdin is not None and client.stdout is not None
    if await client.stdout.readline() != b"READY\n":
        raise SystemExit("the HTTP client process did not start")

    async def go() -> tuple[float, float]:
        printed, _ = await client.communicate(b"go\n")
        if client.returncode != 0:
            raise SystemExit(f"the HTTP client process failed ({client.returncode})")
        rate, cpu = printed.decode().split()[-2:]
        return float(rate), float(cpu)

    return go


async def _python_starts(app: App, runs: int, concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await app.stream("quick", "hi")

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(runs)))
    return runs / (time.perf_counter() - started)


async def _http_first_chunks(url: str, count: int) -> list[float]:
    times = []
    async with httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=60) as http:
        for _ in range(count):
            started = time.perf_counter()
            first: float | None = None
            async with http.stream("POST", "/api/agents/quick/stream", json={"messages": "hi"}) as answer:
                async for line in answer.aiter_lines():  # to the end: the next start waits for this run, as the
                    if first is None and line.startswith("data: {"):  # Python side's waits for its result
                        first = (time.perf_counter() - started) * 1000
            assert first is not None, "the stream sent no chunk"
            times.append(first)
    return times


async def _python_first_chunks(app: App, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        stream = await app.stream("quick", "hi")
        async for _chunk in stream.full_stream:
            times.append((time.perf_counter() - started) * 1000)
            break
        await stream.result()
    return times


async def _http_tail(url: str, run_id: str) -> dict[str, float]:
    arrivals: dict[str, float] = {}
    async with (
        httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=120) as http,
        http.stream("GET", f"/api/runs/{run_id}/stream") as answer,
    ):
        async for line in answer.aiter_lines():
            if line.startswith("data: {"):
                chunk = json.loads(line[6:])
                if chunk["type"] == "text-delta":
                    arrivals.setdefault(chunk["payload"]["text"], time.monotonic())
    return arrivals


async def _python_tail(app: App, run_id: str) -> dict[str, float]:
    arrivals: dict[str, float] = {}
    async for chunk in app.attach(run_id, offset=0, follow="run").full_stream:
        if chunk.type == "text-delta":
            arrivals.setdefault(chunk.payload.text, time.monotonic())  # type: ignore[union-attr]
    return arrivals


async def _started_and_done(
    app: App, clocks: Clocks, runs: int, start: Callable[[], Awaitable[float]]
) -> tuple[float, float, dict[str, float]]:
    """Start ``runs`` runs with ``start`` (it returns their start rate), then wait until every one finished: the
    start rate, the runs a second from the first start until the last run finished, and each clocked process's CPU
    per run (its start and its work)."""
    before = clocks.read()
    began = time.perf_counter()
    rate = await start()
    await _until_runs_finish(app)
    return rate, runs / (time.perf_counter() - began), cpu_ms_per_run(before, clocks.read(), runs)


async def _until_runs_finish(app: App) -> None:
    """Until none of the runs started on the App's task queue is running (Temporal's list, which lags a moment)."""
    query = f"TaskQueue = '{app.task_queue}' AND ExecutionStatus = 'Running'"
    for _ in range(1200):
        if (await app.client.count_workflows(query)).count == 0:
            return
        await asyncio.sleep(0.1)
    raise SystemExit("the started runs did not finish within two minutes")


def _lags(emitted: dict[str, float], arrivals: dict[str, float]) -> list[float]:
    return [(arrivals[word] - at) * 1000 for word, at in emitted.items() if word in arrivals]


async def _main(args: argparse.Namespace) -> int:
    load = os.getloadavg()[0]
    out(f"http_api: load average {load:.2f} at start" + (busy_warning() if load > 0.5 else ""))
    words = "".join(f"w{i:05d} " for i in range(args.tokens))
    timed = TimedModel(words, args.delay_ms / 1000)
    env = await start_server(args.db_file, stock=args.stock_server)
    server_pid = dev_server_pid(set())
    with tempfile.TemporaryDirectory() as scratch:
        app = App(
            agents=[
                Agent(id="quick", instructions="", model=ScriptedModel(lambda r: ScriptedResponse(text="ok"))),
                Agent(id="tokens", instructions="", model=timed),
            ],
            store=f"sqlite:///{scratch}/store.db",
            client=env.client,
            task_queue="bench-http-api",
        )
        server = ApiServer(app, port=0, tokens={TOKEN: "bench"})
        await server.start()
        url = server.url
        try:
            async with app.worker():
                await _python_starts(app, 10, 2)  # warm-up, both sides
                await _in_thread(lambda: _http_starts(url, 10, 2))
                http_rate = float(await _in_thread(lambda: _http_starts(url, args.runs, args.concurrency)))  # type: ignore[arg-type]
                python_rate = await _python_starts(app, args.runs, args.concurrency)
                out(f"starts/s ({args.runs} runs, {args.concurrency} at a time): http {http_rate:.1f}  "
                    f"python {python_rate:.1f}  ratio python/http {python_rate / http_rate:.2f}x")  # fmt: skip
                await _until_runs_finish(app)
                clocks = Clocks(
                    {"this": (os.getpid(), False)} | ({"temporal": (server_pid, False)} if server_pid else {})
                )
                client_cpu: list[float] = []

                go = await _http_client_process(url, args.runs, args.concurrency)

                async def http_elsewhere() -> float:
                    rate, cpu = await go()
                    client_cpu.append(cpu)
                    return rate

                http_apart, http_done, http_cpu = await _started_and_done(app, clocks, args.runs, http_elsewhere)
                python_again, python_done, python_cpu = await _started_and_done(
                    app, clocks, args.runs, lambda: _python_starts(app, args.runs, args.concurrency)
                )
                out(f"starts/s, the HTTP client in a process of its own: http {http_apart:.1f}  python "
                    f"{python_again:.1f}  ratio python/http {python_again / http_apart:.2f}x")  # fmt: skip
                out(f"  runs/s from the first start until every run finished: http {http_done:.1f}  python "
                    f"{python_done:.1f}  ratio http/python {http_done / python_done:.2f}x")  # fmt: skip
                out(f"  CPU per run, ms (its start and its work): http: this process {http_cpu['this']:.1f} + the "
                    f"client's {client_cpu[0]:.1f} + Temporal {http_cpu.get('temporal', float('nan')):.1f}; python: "
                    f"this process {python_cpu['this']:.1f} + Temporal "
                    f"{python_cpu.get('temporal', float('nan')):.1f}")  # fmt: skip
                await _until_runs_finish(app)  # the 600 runs started above are not timed with the latencies
                http_first: list[float] = await _in_thread(lambda: _http_first_chunks(url, args.first_chunk))  # type: ignore[assignment]
                python_first = await _python_first_chunks(app, args.first_chunk)
                out(f"first chunk ({args.first_chunk} runs, ms): http p50 {median(http_first):.1f} "
                    f"p95 {quantile(http_first, 0.95):.1f}  python p50 {median(python_first):.1f} "
                    f"p95 {quantile(python_first, 0.95):.1f}  ratio http/python "
                    f"{median(http_first) / median(python_first):.2f}x")  # fmt: skip
                stream = await app.stream("tokens", "go")
                http_task = _in_thread(lambda: _http_tail(url, stream.run_id))
                python_arrivals = await _python_tail(app, stream.run_id)
                http_arrivals: dict[str, float] = await http_task  # type: ignore[assignment]
                http_lags = _lags(timed.emitted, http_arrivals)
                python_lags = _lags(timed.emitted, python_arrivals)
                out(f"per-token lag ({args.tokens} tokens {args.delay_ms} ms apart; text deltas batched every "
                    f"{TEXT_FLUSH_SECONDS * 1000:.0f} ms; ms from the model's yield on the worker): "
                    f"http p50 {median(http_lags):.1f} p95 {quantile(http_lags, 0.95):.1f} "
                    f"({len(http_lags)} tokens)  python p50 {median(python_lags):.1f} "
                    f"p95 {quantile(python_lags, 0.95):.1f} ({len(python_lags)} tokens)")  # fmt: skip
        finally:
            await server.stop()
            await app.store.close()
    await env.shutdown()
    load = os.getloadavg()[0]
    out(f"http_api: load average {load:.2f} at end")
    out(
        f"http_api: starts/s http={http_rate:.1f} python={python_rate:.1f} ({python_rate / http_rate:.2f}x) "
        f"runs/s-to-finish http={http_done:.1f} python={python_done:.1f} ({http_done / python_done:.2f}x) "
        f"first-chunk p50 http={median(http_first):.1f}ms python={median(python_first):.1f}ms "
        f"({median(http_first) / median(python_first):.2f}x) token-lag p50 http={median(http_lags):.1f}ms "
        f"python={median(python_lags):.1f}ms p95 http={quantile(http_lags, 0.95):.1f}ms "
        f"python={quantile(python_lags, 0.95):.1f}ms"
    )
    return 0


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--first-chunk", type=int, default=30)
    parser.add_argument("--tokens", type=int, default=300)
    parser.add_argument("--delay-ms", type=float, default=10.0)
    parser.add_argument("--auth", action="store_true", help="measure the cost of authentication per request instead")
    parser.add_argument("--requests", type=int, default=2000, help="--auth: requests of each kind")
    add_dev_server_arguments(parser)
    args = parser.parse_args()
    return asyncio.run(auth_cost(args.requests) if args.auth else _main(args))


if __name__ == "__main__":
    run_as_module("http_api")
