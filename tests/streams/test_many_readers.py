"""Many readers of one live run, over HTTP and in another process: each sees every chunk once, in order, whole;
a client that stops reading is cut off with an error event while the others go on to the end; a client that goes
away leaves the run's tail, whether a write waits for it or nothing is due."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import tempo_agents.server.sse as sse_module
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.journal.chunks import chunk_from_wire
from tempo_agents.server.serving import ApiServer
from tempo_agents.server.shapes import chunk_wire
from tempo_agents.server.sse import stream_response
from tempo_agents.streams.run_tail import followers_of
from tests.conftest import AppFactory, fresh_store_url, running_worker
from tests.support.gated_models import PausingModel
from tests.support.http_api import ServedResponse, served, sse_events

LONG = 120.0
SSE_READERS = 150
ATTACHED_READERS = 150

_ATTACH = textwrap.dedent(
    """
    import asyncio, json, sys
    from tempo_agents import App

    async def main():
        app = App(store=sys.argv[1])
        streams = [app.attach(sys.argv[2], follow="run") for _ in range(int(sys.argv[3]))]

        async def read(stream):
            return [[chunk.offset, chunk.model_dump(by_alias=True, mode="json")] async for chunk in stream.full_stream]

        print("attached", flush=True)
        seen = await asyncio.gather(*(read(stream) for stream in streams))
        print(json.dumps(seen), flush=True)
        await app.store.close()

    asyncio.run(main())
    """
)


def talker(words: int, word: str, delay: float) -> Agent:
    """An agent whose one step streams ``words`` words, ``delay`` seconds apart."""
    text = " ".join(f"{n}{word}" for n in range(words))
    return Agent(id="talker", model=ScriptedModel([ScriptedResponse(text=text)], delta_delay=delay))


async def journal_wire(app: App, run_id: str) -> list[tuple[int | None, dict[str, Any]]]:
    """The run's whole journal as ``(offset, chunk)``, each chunk as the run stream sends it."""
    entries = await app.store.read_chunks(run_id, 0, 100_000)
    return [(entry.offset, chunk_wire(chunk_from_wire(entry.chunk, entry.offset))) for entry in entries]


async def test_three_hundred_readers_in_two_processes_each_see_every_chunk_once_in_order(
    make_app: AppFactory, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    store_url = fresh_store_url(request, request.config.getoption("--store"), tmp_path)
    app = make_app([talker(300, "", 0.01)], store=store_url)
    async with served(app) as http, running_worker(app):
        started = await app.stream("talker", "talk")
        run_id = started.run_id
        other = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _ATTACH,
            store_url,
            run_id,
            str(ATTACHED_READERS),
            stdout=subprocess.PIPE,
            limit=1 << 26,
        )
        assert other.stdout is not None
        assert (await asyncio.wait_for(other.stdout.readline(), LONG)).strip() == b"attached"
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=http.base_url, timeout=LONG, limits=limits) as many:
            bodies = await asyncio.gather(*(many.get(f"/runs/{run_id}/stream") for _ in range(SSE_READERS)))
        attached = json.loads(await asyncio.wait_for(other.stdout.readline(), LONG))
        assert await asyncio.wait_for(other.wait(), LONG) == 0
        await started.aclose()

        expected = await journal_wire(app, run_id)
        assert expected[-1][1]["type"] == "finish" and len(expected) > 20
        text = "".join(chunk["payload"]["text"] for _, chunk in expected if chunk["type"] == "text-delta")
        assert text == " ".join(str(n) for n in range(300))
        for body in bodies:
            assert body.status_code == 200
            assert [(offset, data) for offset, data in sse_events(body.content)] == expected
        assert len(attached) == ATTACHED_READERS
        for seen in attached:
            assert [offset for offset, _ in seen] == [offset for offset, _ in expected]
            assert [chunk["type"] for _, chunk in seen] == [chunk["type"] for _, chunk in expected]


@contextlib.asynccontextmanager
async def narrow_server(app: App) -> AsyncIterator[ApiServer]:
    """The API server of ``app`` on a free port, its connections with a small send buffer: the kernel cannot absorb
    a whole run for a client that does not read, so the server's own writes have to wait for it."""
    server = ApiServer(app, port=0)
    await server.start()
    for listening in (sock for uvicorn in server._server.servers for sock in (uvicorn.sockets or ())):
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    try:
        yield server
    finally:
        await server.stop()


def stalled_request(port: int, path: str) -> socket.socket:
    """A GET whose client reads nothing more after sending it, with a small receive window."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    return sock


def read_all(sock: socket.socket) -> bytes:
    sock.settimeout(LONG)
    parts = []
    while part := sock.recv(1 << 16):
        parts.append(part)
    return b"".join(parts)


async def test_a_client_that_stops_reading_is_cut_off_and_the_others_finish(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sse_module, "BACKLOG_BYTES", 16 * 1024)
    monkeypatch.setattr(sse_module, "STALL_SECONDS", 2.0)
    app = make_app([talker(200, "x" * 2000, 0.002)])
    async with (
        narrow_server(app) as server,
        running_worker(app),
        httpx.AsyncClient(base_url=server.url + "/api", timeout=LONG) as http,
    ):
        await follow_while_one_stalls(app, http, server.port)


async def follow_while_one_stalls(app: App, http: httpx.AsyncClient, port: int) -> None:
    started = await app.stream("talker", "talk")
    run_id = started.run_id
    stalled = stalled_request(port, f"/api/runs/{run_id}/stream")
    try:
        readers = [asyncio.create_task(http.get(f"/runs/{run_id}/stream")) for _ in range(3)]
        bodies = await asyncio.wait_for(asyncio.gather(*readers), LONG)
        journal = await journal_wire(app, run_id)
        for body in bodies:
            assert sse_events(body.content) == journal  # the readers who kept reading got the whole run
        await started.aclose()
        await asyncio.sleep(3 * sse_module.STALL_SECONDS)  # the stalled client keeps not reading past its limit
        raw = await asyncio.to_thread(read_all, stalled)
    finally:
        stalled.close()
    head, _, chunked = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    events = sse_events(b"".join(_dechunked(chunked)))
    *sent, (_, ending) = events
    assert 0 < len(sent) < len(journal), "the stalled client was not cut off"
    assert sent == journal[: len(sent)]  # what it was sent is the run's start, whole and in order
    next_offset = journal[len(sent)][0]
    assert ending["type"] == "error" and ending["runId"] == run_id
    assert ending["payload"]["error"] == (
        "stream cut off: the client fell more than 16384 bytes behind the run for 2 s; the run goes on, and "
        f"GET /api/runs/{run_id}/stream?offset={next_offset} reads on from the first chunk this stream did not send"
    )


def _dechunked(body: bytes) -> list[bytes]:
    """The parts of an HTTP/1.1 chunked body."""
    parts = []
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        parts.append(rest[:size])
        body = rest[size + 2 :]
    return parts


async def test_a_client_that_pauses_reading_gets_every_chunk_once_in_order_when_it_reads_again(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks are written to a stream's socket from the run's tail while its client keeps up; once the client's
    socket is full, the write waits in a task of its own and the stream's later chunks queue behind it."""
    begun = {"at once": 0, "waiting": 0}
    run_until_it_waits = sse_module._run_until_it_waits

    def counted(awaitable: Any) -> Any:
        waiting = run_until_it_waits(awaitable)
        begun["at once" if waiting is None else "waiting"] += 1
        return waiting

    monkeypatch.setattr(sse_module, "_run_until_it_waits", counted)
    app = make_app([talker(200, "y" * 2000, 0.002)])  # ~400 KB: within BACKLOG_BYTES, so it is not cut off
    async with narrow_server(app) as server, running_worker(app):
        started = await app.stream("talker", "talk")
        paused = stalled_request(server.port, f"/api/runs/{started.run_id}/stream")
        try:
            await started.text  # the whole run streams while the client reads nothing
            raw = await asyncio.to_thread(read_all, paused)
        finally:
            paused.close()
        await started.aclose()
        journal = await journal_wire(app, started.run_id)
    head, _, chunked = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    body = b"".join(_dechunked(chunked))
    assert sse_events(body) == journal
    assert body.endswith(sse_module.DONE)
    assert begun["at once"] > 0, "no chunk was written from the run's tail"
    assert begun["waiting"] > 0, "no write had to wait for the client: the test did not fill its socket"


async def test_a_client_that_goes_away_while_a_write_waits_for_it_leaves_the_runs_tail(make_app: AppFactory) -> None:
    """The write the tail began waits for a client whose socket is full; the client closes its connection: the
    stream stops following the run at once (no write, task or follower left behind), and the run goes on."""
    app = make_app([talker(400, "z" * 2000, 0.01)])  # ~4 s of streaming, ~800 KB
    async with narrow_server(app) as server, running_worker(app):
        started = await app.stream("talker", "talk")
        stalled = stalled_request(server.port, f"/api/runs/{started.run_id}/stream")
        async with asyncio.timeout(LONG):
            while followers_of(app.store, started.run_id) < 1:  # the SSE stream follows the run
                await asyncio.sleep(0.01)
        await asyncio.sleep(1.0)  # its socket fills long before the run ends
        stalled.close()
        async with asyncio.timeout(LONG):
            while followers_of(app.store, started.run_id) > 0:
                await asyncio.sleep(0.01)
        so_far = await journal_wire(app, started.run_id)
        assert so_far[-1][1]["type"] != "finish", "the stream ended with its run, not when its client went away"
        assert (await started.result()).finish_reason == "stop"  # the run went on to its end
        await started.aclose()


async def test_a_chunk_one_stream_cannot_encode_ends_that_stream_and_not_the_others(make_app: AppFactory) -> None:
    """Chunks are encoded on the run's tail for the streams it writes to; an encoder that fails ends its own stream
    with an error event, while the run's other streams read on to the end."""
    app = make_app([talker(30, "", 0.01)])

    def fails_on_the_fifth_word(chunk: Any) -> dict[str, Any]:
        wire = chunk_wire(chunk)
        if wire["type"] == "text-delta" and wire["payload"]["text"].startswith("5"):
            raise ValueError("cannot encode this chunk")
        return wire

    async with running_worker(app):
        started = await app.stream("talker", "talk")
        failing = stream_response(app.attach(started.run_id, follow="run"), fails_on_the_fifth_word, with_ids=True)
        whole = stream_response(app.attach(started.run_id, follow="run"), chunk_wire, with_ids=True)
        served = [ServedResponse(failing), ServedResponse(whole)]
        await asyncio.wait_for(asyncio.gather(*(each.task for each in served)), LONG)
        failed_body, whole_body = (each.bodies for each in served)
        await started.aclose()
        journal = await journal_wire(app, started.run_id)

    assert sse_events(b"".join(whole_body)) == journal
    *sent, (_, ending) = sse_events(b"".join(failed_body))
    assert sent == journal[: len(sent)] and len(sent) < len(journal)
    assert ending["type"] == "error" and ending["payload"]["error"] == "cannot encode this chunk"
    assert b"".join(failed_body).endswith(sse_module.DONE)


async def test_a_client_that_leaves_an_idle_stream_leaves_the_runs_tail_without_a_write(make_app: AppFactory) -> None:
    """The run pauses mid-answer: no chunk and no heartbeat is due when the client goes away. The server hears the
    connection close by itself and the stream stops following the run (one that learnt of it only from a failed write
    would follow the paused run for as long as it pauses); the run goes on to its end."""
    model = PausingModel([ScriptedResponse(text="one two three")], pause_after=1)
    app = make_app([Agent(id="pauser", model=model)])
    async with narrow_server(app) as server, running_worker(app):
        started = await app.stream("pauser", "talk")
        client = stalled_request(server.port, f"/api/runs/{started.run_id}/stream")
        client.settimeout(LONG)
        received = b""
        while b'"one' not in received:  # the stream is live, and has sent what the run wrote before its pause
            part = await asyncio.to_thread(client.recv, 1 << 16)
            assert part, f"the server ended the stream before the run's first word: {received!r}"
            received += part
        assert followers_of(app.store, started.run_id) == 1
        client.close()
        async with asyncio.timeout(LONG):
            while followers_of(app.store, started.run_id) > 0:
                await asyncio.sleep(0.01)
        model.gate.set()
        assert (await started.result()).text == "one two three"
        await started.aclose()
