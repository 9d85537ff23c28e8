"""A PostgreSQL outage longer than the store's retry window, on a durable server (``fsync`` and
``synchronous_commit`` on) stopped by a fast shutdown or a SIGKILL of its postmaster: runs stand still and finish
once the database is back, their journals whole; HTTP answers 503 with ``Retry-After`` meanwhile (and nothing
else), on connections that stay usable; ``/api/ready`` says the store is down and comes back by itself; durable
streams wait with the run; a sub-agent's relay waits too. And a busy pool is not an outage: it is sized from the URL
or the environment."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from pydantic import BaseModel
from temporalio.client import Client

from tempo_agents import App, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.errors import ConfigurationError, StoreBusyError, StoreUnavailableError
from tempo_agents.server import create_server
from tempo_agents.server.serving import ApiServer
from tempo_agents.store import ChunkWrite
from tempo_agents.store.outages import STORE_OUTAGES
from tempo_agents.store.patience import waiting_for_store
from tempo_agents.store.postgres import PostgresStore
from tempo_agents.telemetry.exposition import MetricsExposition
from tempo_agents.workflows.payloads import RunResult
from tests.support.agents import delegate, scripted_agent
from tests.support.chaos import app as chaos
from tests.support.chaos.check import Report, RunOutcome, check, check_stream
from tests.support.http_api import served_asgi
from tests.support.postgres_server import PostgresServer, find_bindir

RETRY_SECONDS = 1.0
"""The store's retry window in these tests (20 s by default): every outage below is longer."""
OUTAGE_SECONDS = 4.0
GIVE_UP_SECONDS = 180.0
"""Only so that a broken build fails instead of hanging: nothing here is timed."""


@pytest.fixture(scope="module")
def durable_server() -> Iterator[PostgresServer]:
    bindir = find_bindir()
    if bindir is None:
        pytest.fail("PostgreSQL is not installed (apt-get install postgresql, or set TEMPO_AGENTS_PG_BIN)")
    server = PostgresServer(bindir, durable=True)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def url(postgres_server: PostgresServer) -> AsyncIterator[str]:
    yield postgres_server.create_database()


# Pool sizing and a busy pool ---------------------------------------------------------------------------------


def test_the_pool_is_sized_from_the_url_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEMPO_AGENTS_STORE_POOL_SIZE", raising=False)
    assert PostgresStore("postgresql://ann@db/runs").max_size == 10
    monkeypatch.setenv("TEMPO_AGENTS_STORE_POOL_SIZE", "40")
    assert PostgresStore("postgresql://ann@db/runs").max_size == 40
    sized = PostgresStore("postgresql://ann@db/runs?sslmode=disable&pool_size=25&pool_timeout=7")
    assert (sized.max_size, sized.pool_timeout) == (25, 7.0)
    with pytest.raises(ConfigurationError, match="pool_size in the store URL"):
        PostgresStore("postgresql://ann:s3cret@db/runs?pool_size=none")
    monkeypatch.setenv("TEMPO_AGENTS_STORE_POOL_SIZE", "0")
    with pytest.raises(ConfigurationError, match="TEMPO_AGENTS_STORE_POOL_SIZE"):
        PostgresStore("postgresql://ann@db/runs")


async def test_our_url_parameters_never_reach_the_database(url: str) -> None:
    store = PostgresStore(f"{url}?pool_size=2&pool_timeout=5")
    assert await store.append_chunks("r", [ChunkWrite({"n": 0})]) == [0]
    assert [e.chunk for e in await store.read_chunks("r")] == [{"n": 0}]
    await store.close()


async def test_300_concurrent_operations_on_a_healthy_database_all_succeed(url: str) -> None:
    store = PostgresStore(url)
    assert store.max_size == 10
    results = await asyncio.gather(
        *(store.append_chunks(f"r{i % 30}", [ChunkWrite({"i": i}, f"k{i}")]) for i in range(300))
    )
    assert all(len(offsets) == 1 for offsets in results)
    assert sum([len(await store.read_chunks(f"r{n}")) for n in range(30)]) == 300
    await store.close()


async def test_a_pool_whose_connections_all_stay_in_use_is_busy_not_unreachable(url: str) -> None:
    store = PostgresStore(f"{url}?pool_size=1&pool_timeout=0.5")
    await store.append_chunks("held", [ChunkWrite({"n": 0})])
    with psycopg.connect(url) as other:  # another session holds the run's offset row: the store's append waits
        other.execute("SELECT * FROM tempo_agents.journal_head WHERE run_id = 'held' FOR UPDATE")
        append = asyncio.create_task(store.append_chunks("held", [ChunkWrite({"n": 1})]))
        waiting = (
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        with psycopg.connect(url, autocommit=True) as watcher:  # until the append waits for the row, on its connection
            while watcher.execute(waiting).fetchone() != (1,):
                await asyncio.sleep(0.02)
        with pytest.raises(StoreBusyError) as busy:
            await store.read_chunks("other")
        other.rollback()
    assert await append == [1]
    message = busy.value.message
    assert "is busy: all 1 connections of its pool stayed in use" in message
    assert "the database answers" in message
    assert "?pool_size=N in the store URL, TEMPO_AGENTS_STORE_POOL_SIZE, or --store-pool-size" in message
    assert "cannot reach" not in message
    assert isinstance(busy.value, StoreUnavailableError)  # retryable in activities, a 503 over HTTP
    await store.close()


# The store through an outage ----------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["fast", "kill"])
async def test_an_operation_that_may_wait_goes_on_when_the_database_is_back(
    durable_server: PostgresServer, how: str
) -> None:
    store = PostgresStore(durable_server.create_database(), retry_seconds=RETRY_SECONDS)
    await store.append_chunks("r", [ChunkWrite({"n": 0}, "k0")])
    outages_before, unreachable_before = STORE_OUTAGES.read()
    await asyncio.to_thread(durable_server.halt, how)
    try:
        with pytest.raises(StoreUnavailableError, match=r"cannot reach the PostgreSQL store .* \(retried for \d+ s\)"):
            await store.read_chunks("r")
        with waiting_for_store(GIVE_UP_SECONDS):  # as inside an activity
            writing = asyncio.create_task(store.append_chunks("r", [ChunkWrite({"n": 1}, "k1")]))
            await asyncio.sleep(OUTAGE_SECONDS)
            assert not writing.done()
    finally:
        await asyncio.to_thread(durable_server.start_again)
    assert await writing == [1]
    assert [e.chunk["n"] for e in await store.read_chunks("r")] == [0, 1]
    await store.close()
    # The metrics endpoints say how long the store could not reach its database.
    outages, unreachable = STORE_OUTAGES.read()
    assert outages == outages_before + 1
    assert unreachable - unreachable_before >= OUTAGE_SECONDS / 2  # down for all of OUTAGE_SECONDS at least
    page = MetricsExposition().render().decode()
    assert f"tempo_agents_store_outages_total {float(outages)}" in page
    assert "tempo_agents_store_unreachable_seconds_total " in page


TAILING_READERS = 40
"""Readers tailing one run each through an outage: far more than the event loop's default executor has threads."""


async def test_readers_tailing_through_an_outage_hold_no_thread_and_each_gets_its_next_chunk(
    durable_server: PostgresServer,
) -> None:
    store = PostgresStore(durable_server.create_database(), retry_seconds=RETRY_SECONDS)
    runs = [f"tail-{n}" for n in range(TAILING_READERS)]
    for run in runs:
        await store.append_chunks(run, [ChunkWrite({"n": 0}, "k0")])

    async def tail(run: str) -> list[Any]:
        """What a route streaming the run does: wait for the next chunk, read it, and go on through failures."""
        while True:
            try:
                await store.wait_for_chunks(run, 1, timeout=1.0)
                if found := await store.read_chunks(run, 1):
                    return [entry.chunk for entry in found]
            except StoreUnavailableError:
                continue

    readers = [asyncio.create_task(tail(run)) for run in runs]
    assert await asyncio.to_thread(lambda: "warm") == "warm"  # the executor's one thread, used by halt below
    await asyncio.sleep(1.5)  # every reader listening
    threads = threading.active_count()
    await asyncio.to_thread(durable_server.halt, "fast")
    try:
        await asyncio.sleep(OUTAGE_SECONDS)
        assert not any(reader.done() for reader in readers)
        # The readers hold no thread, so the process's executor answers at once and no thread was added.
        assert await asyncio.wait_for(asyncio.to_thread(lambda: "free"), 2.0) == "free"
        assert threading.active_count() <= threads
    finally:
        await asyncio.to_thread(durable_server.start_again)
    with waiting_for_store(GIVE_UP_SECONDS):
        for run in runs:
            await store.append_chunks(run, [ChunkWrite({"n": 1}, "k1")])
    tails = await asyncio.wait_for(asyncio.gather(*readers), GIVE_UP_SECONDS)
    assert tails == [[{"n": 1}]] * TAILING_READERS
    await store.close()


# Runs, HTTP and durable streams through an outage ---------------------------------------------------------------


def _get(port: int, paths: list[str]) -> list[tuple[int, dict[str, str], Any, int]]:
    """GET each path in turn on one kept-alive connection: (status, headers, JSON body, local port)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    answers = []
    try:
        for path in paths:
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
            assert conn.sock is not None, f"{path}: the server closed the connection"
            headers = {k.lower(): v for k, v in response.getheaders()}
            answers.append((response.status, headers, json.loads(body), conn.sock.getsockname()[1]))
    finally:
        conn.close()
    return answers


async def _follow(base: str, run_id: str, events: list[tuple[int, str]], tail: list[str]) -> None:
    """Read the run's durable stream to its end: (id, type) of every event, then what came after the last id."""
    async with (
        httpx.AsyncClient(timeout=None) as http,
        http.stream("GET", f"{base}/api/runs/{run_id}/stream") as response,
    ):
        assert response.status_code == 200
        buffer = ""
        async for text in response.aiter_text():
            buffer += text
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                if block.startswith("id: "):
                    head, data = block.split("\n", 1)
                    events.append((int(head[4:]), json.loads(data.removeprefix("data: "))["type"]))
                elif not block.startswith(":"):
                    tail.append(block)


async def _post(url: str, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=GIVE_UP_SECONDS) as http:
        return await http.post(url, json=body)


async def _generate(base: str, agent_id: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=GIVE_UP_SECONDS) as http:
        return await http.post(f"{base}/api/agents/{agent_id}/generate", json={"messages": "go"})


async def _outcome(app: App, run_id: str, agent_id: str) -> RunOutcome:
    handle = app.client.get_workflow_handle(run_id, result_type=RunResult)
    result = await asyncio.wait_for(handle.result(), GIVE_UP_SECONDS)
    return RunOutcome(agent_id, "completed", result.finish_reason)


@pytest.mark.parametrize("how", ["fast", "kill"])
async def test_runs_wait_out_an_outage_longer_than_the_retry_window(
    durable_server: PostgresServer,
    client: Client,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    exec_log = tmp_path / "exec.log"
    monkeypatch.setenv(chaos.EXEC_LOG_ENV, str(exec_log))
    monkeypatch.setenv(chaos.WORKER_ENV, "in-process")
    database = durable_server.create_database()
    store = PostgresStore(database, retry_seconds=RETRY_SECONDS)
    # The test's own look at the journals goes through a pool of its own, so that its polling never takes a
    # connection the App's worker and readers wait for (on a busy machine it could starve them before the outage).
    # Its patience is its own too: on a loaded machine a new connection can take longer than the App's short retry
    # window before the outage even begins, and the test's look is not what it tests.
    probe = PostgresStore(database, retry_seconds=60)
    app = chaos.build_app(task_queue=f"outage-{how}-{time.time()}")
    app.registry.use_store(store)
    app.use_client(client)
    # chaos-suspend (local model steps) waits for a person first, and is answered while the store is down.
    agent_ids = ["chaos-suspend"] + ["chaos", "chaos-long", "chaos-long-local"] * 2
    server = ApiServer(app, port=0)
    await server.start()
    try:
        async with app.worker():
            waiting = await app.stream("chaos-suspend", "go")
            assert (await waiting.finish_reason) == "suspended"
            streams = [waiting] + [await app.stream(agent_id, "go") for agent_id in agent_ids[1:]]
            run_ids = [s.run_id for s in streams]
            followed: dict[str, tuple[list[tuple[int, str]], list[str]]] = {r: ([], []) for r in run_ids}
            readers = [asyncio.create_task(_follow(server.url, r, *followed[r])) for r in run_ids]
            for stream in streams:  # every run under way: its first step has begun
                while len(await probe.read_chunks(stream.run_id, 0, 3)) < 3:
                    await asyncio.sleep(0.05)

            await asyncio.to_thread(durable_server.halt, how)
            # A run started while the store is down: refused (503, its audit intent cannot be written) or started.
            started_down = asyncio.create_task(_generate(server.url, "chaos"))
            answer = {"toolCallId": f"call_{chaos.SUSPEND_STEP}_2", "resumeData": {"ok": True}}
            answered_down = asyncio.create_task(_post(f"{server.url}/api/runs/{run_ids[0]}/resume", answer))
            answers: list[tuple[int, dict[str, str], Any, int]] = []
            try:
                down_since = time.monotonic()
                while time.monotonic() - down_since < OUTAGE_SECONDS:
                    paths = ["/api/ready", f"/api/runs/{run_ids[0]}", "/api/health"]
                    answers += await asyncio.to_thread(_get, server.port, paths)
            finally:
                await asyncio.to_thread(durable_server.start_again)

            # A change the server cannot record in its audit trail is refused, 503 with Retry-After and nothing done;
            # the caller sends it again once the store is back, as Retry-After says (resumes are idempotent).
            resumed = await asyncio.wait_for(answered_down, GIVE_UP_SECONDS)
            assert resumed.status_code in (200, 503), resumed.text
            again = await _post(f"{server.url}/api/runs/{run_ids[0]}/resume", answer)
            assert again.status_code == 200, again.text
            if resumed.status_code == 200:
                assert again.json() == resumed.json()
            generated = await asyncio.wait_for(started_down, GIVE_UP_SECONDS)
            if generated.status_code == 503:  # refused while the store was down: started now
                assert generated.json()["code"] == "STORE_UNAVAILABLE", generated.text
                generated = await _generate(server.url, "chaos")

            outcomes = dict(
                zip(
                    run_ids,
                    await asyncio.gather(*(_outcome(app, r, a) for r, a in zip(run_ids, agent_ids, strict=True))),
                    strict=True,
                )
            )
            assert generated.status_code == 200, generated.text
            assert generated.json()["finishReason"] == "stop"
            outcomes[generated.json()["runId"]] = await _outcome(app, generated.json()["runId"], "chaos")
            await asyncio.wait_for(asyncio.gather(*readers), GIVE_UP_SECONDS)
            ready_again = await asyncio.to_thread(_get, server.port, ["/api/ready", f"/api/runs/{run_ids[0]}"])
    finally:
        await server.stop()
        await probe.close()

    # HTTP during the outage: 503 with Retry-After and a JSON error for what needs the store, on a connection
    # that stays open (the next request of each round went on the same one); liveness stays 200.
    for status, headers, body, _ in answers:
        if "status" in body and body["status"] == "ok":
            assert status == 200
            continue
        assert status == 503, body
        assert headers["retry-after"] == "5"
        assert headers.get("connection") != "close"
        assert body["code"] == "STORE_UNAVAILABLE"
        if body.get("status") == "unavailable":  # readiness, open to everyone: no store URL
            assert body["error"] == "the store cannot be reached"
        else:
            assert body["error"].startswith("cannot reach the PostgreSQL store at ")
    rounds = [answers[i : i + 3] for i in range(0, len(answers), 3)]
    assert rounds and all(len({port for *_, port in round_}) == 1 for round_ in rounds)
    assert [status for status, *_ in ready_again] == [200, 200]
    assert ready_again[0][2] == {"status": "ready", "store": "ok"}

    # Every run finished, journals whole (the chaos checker), streams whole and ended only with their run.
    report: Report = await check(store, exec_log, [], outcomes)
    for run_id in run_ids:
        events, tail = followed[run_id]
        check_stream(report, run_id, await store.read_chunks(run_id, 0, 1_000_000), events)
        assert events[-1][1] == "finish", f"the stream of {run_id} ended with {events[-1]}"
        assert tail == ["data: [DONE]"], f"the stream of {run_id} ended with {tail}"
    assert report.violations == [], report.summary()
    assert report.runs == len(agent_ids) + 1 and report.failed_runs == report.unfinished_runs == 0
    await store.close()


async def test_an_unexpected_500_tells_the_client_that_its_connection_closes(tmp_path: Path) -> None:
    """uvicorn drops a connection after an unhandled error: the answer must say so, or the client's next request on
    that kept-alive connection dies with a reset (a 503 keeps it open: see above)."""
    app = App(store=f"sqlite:///{tmp_path / 'store.db'}")
    api = create_server(app)

    async def broken() -> None:
        raise RuntimeError("a bug")

    api.add_api_route("/api/broken", broken)

    def two_requests(port: int) -> list[tuple[int, str | None, Any]]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        answers = []
        for path in ("/api/broken", "/api/health"):
            conn.request("GET", path)
            response = conn.getresponse()
            answers.append((response.status, response.getheader("connection"), json.loads(response.read())))
        conn.close()
        return answers

    async with served_asgi(api, lifespan="off", log_level="critical") as port:
        answers = await asyncio.to_thread(two_requests, port)
    assert answers == [(500, "close", {"error": "a bug"}), (200, None, {"status": "ok"})]


class _Nap(BaseModel):
    seconds: float


async def _nap(data: _Nap, ctx: ToolContext) -> dict[str, float]:
    await asyncio.sleep(data.seconds)
    return {"slept": data.seconds}


async def test_a_sub_agent_waits_out_an_outage_and_its_parent_relays_it_whole(
    durable_server: PostgresServer, client: Client
) -> None:
    """The child's tool ends while the store is down; its record, the child's steps and the parent's relay all wait
    for the database, and the parent shows every chunk of the child once."""
    nap = create_tool(id="nap", description="Sleeps", input_schema=_Nap, execute=_nap)
    child = scripted_agent(
        "napper", [ScriptedToolCall("nap", {"seconds": 1.5}, id="n1")], "Rested.", tools={"nap": nap}
    )
    parent = scripted_agent("boss", [delegate("napper", "rest", "d1")], "All rested.", agents={"napper": child})
    store = PostgresStore(durable_server.create_database(), retry_seconds=RETRY_SECONDS)
    app = App(agents=[parent], store=store, client=client, task_queue=f"outage-child-{time.time()}")
    async with app.worker():
        stream = await app.stream("boss", "go")
        while not [e for e in await store.read_chunks(stream.run_id) if e.chunk["type"] == "data-child-run"]:
            await asyncio.sleep(0.05)
        await asyncio.to_thread(durable_server.halt, "kill")
        try:
            await asyncio.sleep(OUTAGE_SECONDS)  # the nap ends meanwhile: its result waits for the database
        finally:
            await asyncio.to_thread(durable_server.start_again)
        result = await asyncio.wait_for(stream.result(), GIVE_UP_SECONDS)
    assert (result.finish_reason, result.text) == ("stop", "All rested.")
    journal = await store.read_chunks(result.run_id, 0, 1_000_000)
    assert [e.offset for e in journal] == list(range(len(journal)))
    relayed = [e.chunk["payload"]["output"] for e in journal if e.chunk["type"] == "tool-output"]
    child_id = next(e.chunk for e in journal if e.chunk["type"] == "data-child-run")["data"]["childRunId"]
    child_journal = await store.read_chunks(child_id, 0, 1_000_000)
    assert [c["type"] for c in relayed] == [e.chunk["type"] for e in child_journal]
    assert [c["type"] for c in relayed].count("finish") == 1
    (answer,) = [e.chunk for e in journal if e.chunk["type"] == "tool-result"]
    assert answer["payload"]["result"]["text"] == "Rested."
    await store.close()
