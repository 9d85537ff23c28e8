"""Threads over HTTP and from events: ``threadStrategy`` in a stream's body (409 naming the active run for
``reject``, the queue position in headers for ``enqueue``), ``GET /api/threads/{threadId}`` (runs and messages),
``DELETE /api/threads/{threadId}/queue/{runId}``, and webhooks that name a thread, which wait their turn on it and
start once however often they are delivered."""

from __future__ import annotations

import asyncio
import base64
import json
import time

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.ingress.webhooks import sign_webhook
from tempo_agents.models.model import ModelRequest
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served
from tests.support.thread_agents import Gate, gated_agent

MEMORY = {"thread": "t1", "resource": "u1"}
SECRET = "whsec_" + base64.b64encode(b"a key of thirty-two bytes, or so").decode()


async def test_strategies_thread_view_and_queue_over_http(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app), served(app) as http:
        first = await app.stream("chat", "one", memory=MEMORY)
        refused = await http.post(
            "/agents/chat/generate", json={"messages": "two", "memory": MEMORY, "threadStrategy": "reject"}
        )
        assert refused.status_code == 409
        assert refused.json()["activeRunId"] == first.run_id
        assert refused.json()["code"] == "THREAD_BUSY"
        bad = await http.post("/agents/chat/stream", json={"messages": "x", "memory": MEMORY, "threadStrategy": "no"})
        assert bad.status_code == 400

        async with http.stream(
            "POST", "/agents/chat/stream", json={"messages": "three", "memory": MEMORY, "runId": "third"}
        ) as queued:
            assert queued.status_code == 200
            assert queued.headers["x-thread-outcome"] == "queued"
            assert queued.headers["x-run-id"] == "third"
            assert queued.headers["x-thread-active-run"] == first.run_id
            assert queued.headers["x-thread-position"] == "1"
        fourth = await app.stream("chat", "four", memory=MEMORY, run_id="fourth")

        view = (await http.get("/threads/t1", params={"resourceId": "u1"})).json()
        assert view["runs"]["active"] == [{"runId": first.run_id, "agentId": "chat", "state": "active"}]
        assert [r["runId"] for r in view["runs"]["queued"]] == ["third", "fourth"]
        assert view["messages"] == []

        removed = await http.delete("/threads/t1/queue/third", params={"resourceId": "u1"})
        assert removed.status_code == 200 and removed.json() == {"runId": "third", "removed": True}
        again = await http.delete("/threads/t1/queue/third", params={"resourceId": "u1"})
        assert again.status_code == 404

        gate.open()
        assert await fourth.text == "four after 2"
        for _ in range(200):
            view = (await http.get("/threads/t1", params={"resourceId": "u1"})).json()
            if not view["runs"]["active"]:
                break
            await asyncio.sleep(0.05)
        assert [(r["runId"], r["status"]) for r in view["runs"]["done"]] == [
            ("third", "removed"),
            (first.run_id, "COMPLETED"),
            ("fourth", "COMPLETED"),
        ]
        assert [m["role"] for m in view["messages"]] == ["user", "assistant", "user", "assistant"]
        assert view["messages"][3]["content"][0]["text"] == "four after 2"
        unknown = (await http.get("/threads/nobody", params={"resourceId": "u1"})).json()
        assert unknown["runs"] == {"active": [], "queued": [], "done": [], "waiting": []} and unknown["messages"] == []


def _delivery(webhook_id: str) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"alert": "disk full", "memory": MEMORY}).encode()  # the thread is signed with the payload
    sent = int(time.time())
    return body, {
        "content-type": "application/json",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(sent),
        "webhook-signature": sign_webhook(SECRET, webhook_id, sent, body),
    }


async def test_an_event_on_a_busy_thread_waits_its_turn_and_runs_once(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)], event_secrets={"chat": SECRET})
    async with running_worker(app), served(app) as http:
        first = await app.stream("chat", "one", memory=MEMORY)
        body, headers = _delivery("evt-1")
        ready = asyncio.Event()

        async def deliver() -> tuple[int, dict[str, object]]:
            await ready.wait()
            answer = await http.post("/agents/chat/events?thread=t1&resource=u1", content=body, headers=headers)
            return answer.status_code, answer.json()

        deliveries = [asyncio.create_task(deliver()) for _ in range(2)]
        await asyncio.sleep(0)
        ready.set()  # the same event delivered twice at once
        answers = await asyncio.gather(*deliveries)
        assert sorted(status for status, _ in answers) == [200, 202]
        assert {a["runId"] for _, a in answers} == {"event-chat-evt-1"}
        assert sorted(bool(a["duplicate"]) for _, a in answers) == [False, True]
        thread = await app.thread("t1", resource_id="u1")
        assert [r.run_id for r in thread.queued] == ["event-chat-evt-1"]
        async with http.stream("GET", "/runs/event-chat-evt-1/stream") as queued:  # followed by its id while queued
            assert queued.status_code == 200
        gate.open()
        assert await app.attach("event-chat-evt-1").text == body.decode() + " after 2"
        assert await first.text == "one after 1"
        late, _ = await asyncio.gather(
            http.post("/agents/chat/events?thread=t1&resource=u1", content=body, headers=headers), asyncio.sleep(0)
        )
        assert (late.status_code, late.json()["duplicate"]) == (200, True)
    messages = await app.store.get_thread_messages("t1", "u1")
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]


async def test_a_waiting_run_yields_its_thread_over_http_unless_the_body_says_it_holds_it(make_app: AppFactory) -> None:
    pay = create_tool(id="pay", description="Pays", execute=lambda data: "paid", require_approval=True)

    def script(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        if last.role == "user" and last.text.startswith("Pay") and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {})])
        return ScriptedResponse(text="ok")

    app = make_app([Agent(id="payments", model=ScriptedModel(script), tools={"pay": pay})])
    yielded = {"thread": "t-yields", "resource": "u1"}
    held = {"thread": "t-holds", "resource": "u1"}
    async with running_worker(app), served(app) as http:
        first = await http.post("/agents/payments/generate", json={"messages": "Pay", "memory": yielded})
        assert first.json()["finishReason"] == "suspended"
        second = await http.post(
            "/agents/payments/generate", json={"messages": "hi", "memory": yielded, "threadStrategy": "reject"}
        )
        assert second.status_code == 200 and second.json()["text"] == "ok"
        view = (await http.get("/threads/t-yields", params={"resourceId": "u1"})).json()
        assert [r["runId"] for r in view["runs"]["waiting"]] == [first.json()["runId"]]

        holding = await http.post(
            "/agents/payments/generate", json={"messages": "Pay", "memory": held, "waitingHoldsThread": True}
        )
        assert holding.json()["finishReason"] == "suspended"
        refused = await http.post(
            "/agents/payments/generate", json={"messages": "hi", "memory": held, "threadStrategy": "reject"}
        )
        assert refused.status_code == 409 and refused.json()["activeRunId"] == holding.json()["runId"]


async def test_a_thread_id_with_a_slash_is_reachable_on_every_thread_route(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    memory = {"thread": "team/alpha", "resource": "u1"}
    async with running_worker(app), served(app) as http:
        first = await app.stream("chat", "one", memory=memory)
        await app.stream("chat", "two", memory=memory, run_id="second")
        view = await http.get("/threads/team%2Falpha", params={"resourceId": "u1"})
        assert view.status_code == 200
        assert view.json()["threadId"] == "team/alpha"
        assert [r["runId"] for r in view.json()["runs"]["active"]] == [first.run_id]
        assert [r["runId"] for r in view.json()["runs"]["queued"]] == ["second"]
        removed = await http.delete("/threads/team%2Falpha/queue/second", params={"resourceId": "u1"})
        assert removed.status_code == 200 and removed.json() == {"runId": "second", "removed": True}
        gate.open()
        answered = await http.post("/agents/chat/generate", json={"messages": "three", "memory": memory})
        assert answered.status_code == 200 and answered.json()["text"] == "three after 2"
        view = await http.get("/threads/team%2Falpha", params={"resourceId": "u1"})
        texts = [m["content"][0]["text"] for m in view.json()["messages"]]
        assert texts == ["one", "one after 1", "three", "three after 2"]
