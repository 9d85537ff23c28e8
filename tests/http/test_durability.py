"""Runs do not depend on their HTTP connections: reconnecting misses nothing, racing and retried resumes
resume once."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncGenerator
from typing import Any

import httpx

from tempo_agents import App
from tempo_agents.journal.chunks import chunk_to_wire
from tempo_agents.models.model import ModelRequest
from tempo_agents.models.scripted import ScriptedModel, ScriptedResponse
from tempo_agents.server.shapes import chunk_wire
from tempo_agents.streams.run_tail import followers_of
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import id_events, parity_agent, served, sse_chunks, types

LONG_TEXT = " ".join(f"word{i}" for i in range(60))


def slow_reply(request: ModelRequest) -> ScriptedResponse:
    return ScriptedResponse(text=LONG_TEXT)


async def journal(app: App, run_id: str) -> list[dict[str, Any]]:
    return [chunk_to_wire(chunk) async for chunk in app.attach(run_id, follow="run").full_stream]


async def wire_journal(app: App, run_id: str) -> list[dict[str, Any]]:
    """The whole run as agent streams send it."""
    return [chunk_wire(chunk) async for chunk in app.attach(run_id, follow="run").full_stream]


async def test_disconnect_then_reconnect_with_last_event_id(make_app: AppFactory) -> None:
    app = make_app([parity_agent(model=ScriptedModel(slow_reply, delta_delay=0.03))])
    async with served(app) as http, running_worker(app):
        received: list[dict[str, Any]] = []
        async with http.stream("POST", "/agents/assistant/stream", json={"messages": "talk"}) as response:
            buffer = ""
            async for text in response.aiter_text():
                buffer += text
                *blocks, buffer = buffer.split("\n\n")
                received += [json.loads(b[6:]) for b in blocks if b.startswith("data: {")]
                if len(received) >= 8:
                    break  # the client goes away mid-stream
        run_id = received[0]["runId"]
        assert types(received)[-1] == "text-delta"
        last = received[-1]["offset"]
        resumed = await http.get(f"/runs/{run_id}/stream", headers={"Last-Event-ID": str(last)})
        events = id_events(resumed.content)
    assert all(offset == chunk["offset"] for offset, chunk in events)
    combined = received + [chunk for _, chunk in events]
    offsets = [chunk["offset"] for chunk in combined]
    assert offsets == list(range(len(combined)))  # every chunk exactly once, in order
    assert combined[-1]["type"] == "finish" and combined[-1]["payload"]["stepResult"]["reason"] == "stop"
    text = "".join(c["payload"]["text"] for c in combined if c["type"] == "text-delta")
    assert text == LONG_TEXT  # the run went on without its client
    assert combined == await wire_journal(app, run_id)


async def test_run_stream_follows_the_run_across_suspensions(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        first = sse_chunks((await http.post("/agents/assistant/stream", json={"messages": "charge 990"})).content)
        run_id = first[0]["runId"]

        async def watch() -> bytes:
            return (await http.get(f"/runs/{run_id}/stream", params={"offset": 2})).content

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.5)
        assert not watcher.done()  # still following: the run waits for a person
        accepted = await http.post(f"/runs/{run_id}/resume", json={"resumeData": {"confirmed": True}})
        assert accepted.status_code == 200 and accepted.json()["accepted"] is True
        events = await asyncio.wait_for(watcher, 30)
    parsed = id_events(events)
    assert parsed[0][0] == 2
    reasons = [c["payload"]["stepResult"]["reason"] for _, c in parsed if c["type"] == "finish"]
    assert reasons == ["suspended", "stop"]
    assert [offset for offset, _ in parsed] == list(range(2, 2 + len(parsed)))


async def test_two_clients_resuming_one_call_at_once(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        base = str(http.base_url)
        for same_data in (False, True):
            first = (await http.post("/agents/assistant/generate", json={"messages": "charge"})).json()
            run_id = first["runId"]
            async with (
                httpx.AsyncClient(base_url=base, timeout=60) as a,
                httpx.AsyncClient(base_url=base, timeout=60) as b,
            ):
                await asyncio.gather(a.get("/agents"), b.get("/agents"))  # both connected and ready
                answers = [{"confirmed": True}, {"confirmed": same_data}]
                headers = [{"X-Request-Id": "client-a"}, {"X-Request-Id": "client-b"}] if same_data else [{}, {}]
                responses = await asyncio.gather(
                    *(
                        client.post(
                            "/agents/assistant/resume-stream",
                            json={"runId": run_id, "toolCallId": "call-c1", "resumeData": answer},
                            headers=header,
                        )
                        for client, answer, header in zip((a, b), answers, headers, strict=True)
                    )
                )
            assert sorted(r.status_code for r in responses) == [200, 409]
            loser = next(r for r in responses if r.status_code == 409)
            assert "not suspended" in loser.json()["error"]
            chunks = await journal(app, run_id)
            assert [c["type"] for c in chunks].count("tool-result") == 1


async def test_a_retried_resume_resumes_once_and_gets_the_same_answer(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        run_id = (await http.post("/agents/assistant/generate", json={"messages": "charge"})).json()["runId"]
        body = {"runId": run_id, "toolCallId": "call-c1", "resumeData": {"confirmed": True}}
        once = await http.post("/agents/assistant/resume-stream", json=body)
        twice = await http.post("/agents/assistant/resume-stream", json=body)
        assert once.status_code == twice.status_code == 200
        assert sse_chunks(once.content) == sse_chunks(twice.content)
        assert [c["type"] for c in await journal(app, run_id)].count("tool-result") == 1


async def test_a_resume_whose_response_is_lost(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        run_id = (await http.post("/agents/assistant/generate", json={"messages": "delete"})).json()["runId"]
        body = json.dumps({"runId": run_id, "toolCallId": "call-d1"}).encode()
        url = httpx.URL(str(http.base_url))
        request = (
            f"POST /api/agents/assistant/approve-tool-call-generate HTTP/1.1\r\nHost: {url.host}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        ).encode() + body
        with socket.create_connection((url.host, url.port or 80)) as raw:
            raw.sendall(request)  # and hang up before any answer: the response is lost
        for _ in range(200):
            if (await http.get(f"/runs/{run_id}")).json()["status"] == "completed":
                break
            await asyncio.sleep(0.05)
        assert (await http.get(f"/runs/{run_id}")).json()["status"] == "completed"
        retried = await http.post(
            "/agents/assistant/approve-tool-call-generate", json={"runId": run_id, "toolCallId": "call-d1"}
        )
        assert retried.status_code == 200, retried.text
        assert retried.json()["finishReason"] == "stop"
        assert retried.json()["toolResults"][0]["payload"]["result"] == {"deleted": "notes/x.txt"}
        assert [c["type"] for c in await journal(app, run_id)].count("tool-result") == 1
        other = await http.post(
            "/agents/assistant/decline-tool-call-generate", json={"runId": run_id, "toolCallId": "call-d1"}
        )
        assert other.status_code == 409


async def test_a_client_that_goes_away_stops_its_journal_reader(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app) as http, running_worker(app):
        run_id = (await http.post("/agents/assistant/generate", json={"messages": "charge"})).json()["runId"]
        assert followers_of(app.store, run_id) == 0
        async with http.stream("GET", f"/runs/{run_id}/stream") as following:
            await following.aiter_bytes().__anext__()
            assert followers_of(app.store, run_id) == 1  # it follows the waiting run
        for _ in range(100):
            if followers_of(app.store, run_id) == 0:
                break
            await asyncio.sleep(0.05)
        assert followers_of(app.store, run_id) == 0  # and stopped once the client went away
        detail = (await http.get(f"/runs/{run_id}")).json()
        assert detail["status"] == "suspended"  # the run is unaffected


async def test_idle_streams_get_heartbeat_comments(make_app: AppFactory) -> None:
    from tempo_agents.server.sse import stream_response

    app = make_app([parity_agent()])
    response = stream_response(app.attach("nothing-yet"), chunk_wire, heartbeat=0.05)
    body = response.body_iterator
    assert isinstance(body, AsyncGenerator)
    assert await anext(body) == b": ping\n\n"  # comment blocks: every SSE parser skips them
    assert await anext(body) == b": ping\n\n"  # and again, for as long as the stream stays idle
    await body.aclose()
