"""A run its thread queues has no workflow until its turn comes; whoever knows only its id still follows it: the
run's HTTP stream (``GET /api/runs/{runId}/stream``) and ``App.attach`` wait for its turn instead of answering that no
such run exists, end when it is taken out of the queue, and keep another tenant's queued run out of sight."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from tempo_agents import App
from tempo_agents.streams import AgentStream
from tempo_agents.streams.stream import PROBE_AFTER_IDLE_SECONDS
from tests.conftest import AppFactory, running_worker
from tests.support.clients import start_node_client
from tests.support.http_api import id_events, served, sse_events
from tests.support.polling import until
from tests.support.tenants import TENANT_ROLES, TENANT_TOKENS
from tests.support.thread_agents import Gate, gated_agent

MEMORY = {"thread": "t-queue", "resource": "acme"}
VIEWER = {"Authorization": "Bearer tok-viewer"}  # a viewer in acme only
ROOT = {"Authorization": "Bearer tok-root"}


async def _queued_over_http(
    http: httpx.AsyncClient, run_id: str, memory: dict[str, str], headers: dict[str, str] | None = None
) -> None:
    """Send ``run_id``'s message to the busy thread over HTTP and check the thread queued it (the start's own stream
    is closed at once: the queued run does not depend on it)."""
    async with http.stream(
        "POST", "/agents/chat/stream", json={"messages": run_id, "memory": memory, "runId": run_id}, headers=headers
    ) as started:
        assert started.status_code == 200
        assert started.headers["x-thread-outcome"] == "queued"


async def _still_queued(app: App, run_id: str, memory: dict[str, str]) -> bool:
    thread = await app.thread(memory["thread"], resource_id=memory["resource"])
    return [entry.run_id for entry in thread.queued] == [run_id]


@asynccontextmanager
async def _busy_thread(
    make_app: AppFactory, queued: str
) -> AsyncIterator[tuple[App, httpx.AsyncClient, Gate, AgentStream]]:
    """The app served over HTTP, with a run holding ``MEMORY``'s thread until the gate opens and ``queued`` queued
    behind it over HTTP; yields the app, the HTTP client, the gate and the first run's stream."""
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app), served(app) as http:
        first = await app.stream("chat", "one", memory=MEMORY)
        await _queued_over_http(http, queued, MEMORY)
        yield app, http, gate, first


async def test_a_queued_runs_stream_and_attach_wait_for_its_turn(make_app: AppFactory) -> None:
    async with _busy_thread(make_app, "followed-second") as (app, http, gate, first):

        async def http_watcher() -> bytes:
            async with http.stream("GET", "/runs/followed-second/stream") as answer:
                assert answer.status_code == 200, await answer.aread()
                return await answer.aread()

        async def attached_text() -> str:
            return await app.attach("followed-second", follow="run").text

        detail = (await http.get("/runs/followed-second")).json()
        assert {key: detail[key] for key in ("runId", "agentId", "status", "threadId", "resourceId", "queue")} == {
            "runId": "followed-second",
            "agentId": "chat",
            "status": "queued",
            "threadId": "t-queue",
            "resourceId": "acme",
            "queue": {"position": 1, "behind": [first.run_id]},
        }

        async def observer() -> bytes:  # the official client's reconnect: POST /agents/:agentId/observe
            async with http.stream("POST", "/agents/chat/observe", json={"runId": "followed-second"}) as answer:
                assert answer.status_code == 200, await answer.aread()
                return await answer.aread()

        watched = asyncio.create_task(http_watcher())
        attached = asyncio.create_task(attached_text())
        observed = asyncio.create_task(observer())
        # Long enough that both streams, idle, ask whether the run has ended, while it is still queued.
        await asyncio.sleep(PROBE_AFTER_IDLE_SECONDS + 1.5)
        assert await _still_queued(app, "followed-second", MEMORY)
        assert not watched.done() and not attached.done() and not observed.done()

        gate.open()
        assert await first.text == "one after 1"
        assert await attached == "followed-second after 2"
        chunks = [data for _, data in id_events(await watched)]
        assert chunks[0]["type"] == "start" and chunks[0]["runId"] == "followed-second"
        assert chunks[-1]["type"] == "finish"
        text = "".join(chunk["payload"]["text"] for chunk in chunks if chunk["type"] == "text-delta")
        assert text == "followed-second after 2"
        observed_chunks = [data for _, data in sse_events(await observed)]
        assert [chunk["type"] for chunk in observed_chunks] == [chunk["type"] for chunk in chunks]

        async def completed() -> bool:  # its workflow closes a moment after the finish chunk
            return bool((await http.get("/runs/followed-second")).json()["status"] == "completed")

        await until(completed)

        unknown = await http.get("/runs/no-such-run/stream")
        assert (unknown.status_code, unknown.json()) == (404, {"error": 'no run "no-such-run" exists'})


async def test_a_queued_runs_stream_ends_when_it_is_taken_out_of_the_queue(make_app: AppFactory) -> None:
    async with _busy_thread(make_app, "followed-removed") as (app, http, gate, first):
        async with http.stream("GET", "/runs/followed-removed/stream") as answer:
            assert answer.status_code == 200
            assert await app.cancel_queued_run("t-queue", "followed-removed", resource_id="acme")
            body = await asyncio.wait_for(answer.aread(), timeout=PROBE_AFTER_IDLE_SECONDS * 5)
        assert [data for _, data in sse_events(body)] == [
            {
                "type": "error",
                "runId": "followed-removed",
                "from": "AGENT",
                "payload": {"error": "run ended (removed) without a finish chunk"},
            }
        ]
        gate.open()
        assert await first.text == "one after 1"


async def test_another_tenants_queued_run_is_answered_as_none(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    theirs = {"thread": "t-queue", "resource": "globex"}
    async with running_worker(app), served(app, tokens=TENANT_TOKENS, roles=TENANT_ROLES) as http:
        firsts = [await app.stream("chat", "one", memory=memory) for memory in (MEMORY, theirs)]
        await _queued_over_http(http, "queued-in-acme", MEMORY, headers=ROOT)
        await _queued_over_http(http, "queued-in-globex", theirs, headers=ROOT)

        hidden = await http.get("/runs/queued-in-globex/stream", headers=VIEWER)
        missing = await http.get("/runs/no-such-run/stream", headers=VIEWER)
        assert hidden.status_code == missing.status_code == 404
        assert hidden.text.replace("queued-in-globex", "no-such-run") == missing.text
        for run_id, headers in (("queued-in-acme", VIEWER), ("queued-in-globex", ROOT)):
            async with http.stream("GET", f"/runs/{run_id}/stream", headers=headers) as answer:
                assert answer.status_code == 200, (run_id, await answer.aread())
        gate.open()
        for first in firsts:
            assert await first.text == "one after 1"


async def test_the_official_client_sends_to_a_busy_thread_and_reconnects_by_the_run_id(make_app: AppFactory) -> None:
    """``@mastra/client-js`` as a browser app would use it: ``stream`` on the busy thread (queued), then ``observe``
    with the run's id alone while it is still queued; both read the run's whole stream once its turn comes."""
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app), served(app) as http:
        first = await app.stream("chat", "one", memory=MEMORY)
        run_id = "official-queued"
        env = {"TEMPO_URL": str(http.base_url).removesuffix("/").removesuffix("/api"), "AGENT_ID": "chat"}
        env |= {"RUN_ID": run_id, "THREAD_ID": MEMORY["thread"], "RESOURCE_ID": MEMORY["resource"]}
        node = await start_node_client("queued_client.mjs", env)
        try:
            assert node.stdout is not None
            said = await asyncio.wait_for(node.stdout.readline(), 60)
            assert json.loads(said) == {"threadOutcome": "queued"}
            # Both of the client's streams held open while the run waits its turn, long enough to ask whether it ended.
            await asyncio.sleep(PROBE_AFTER_IDLE_SECONDS + 1.5)
            assert await _still_queued(app, run_id, MEMORY)
            assert node.returncode is None
            gate.open()
            out, err = await asyncio.wait_for(node.communicate(), 60)
        finally:
            if node.returncode is None:
                node.kill()
                await node.wait()
        assert node.returncode == 0, err.decode()
        assert await first.text == "one after 1"
    streams = json.loads(out.decode().strip().splitlines()[-1])
    for chunks in streams.values():
        assert chunks[0]["type"] == "start" and chunks[0]["runId"] == run_id
        assert chunks[-1]["type"] == "finish"
        text = "".join(chunk["payload"]["text"] for chunk in chunks if chunk["type"] == "text-delta")
        assert text == f"{run_id} after 2"
    assert streams["observed"] == streams["sent"]
