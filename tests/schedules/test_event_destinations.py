"""Where an event's run lands is bound to what the delivery's credential covers: the thread and resource named in the
signed body (agent route) or by the source's configuration, never the URL's query string. A captured delivery sent
again naming another thread or resource is refused, and the answer says what the thread did with the run
(``x-thread-outcome``: started, queued behind the active run, duplicate)."""

from __future__ import annotations

import base64
from functools import partial
from typing import Any

from tempo_agents import WebhookSource
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served
from tests.support.thread_agents import Gate, gated_agent
from tests.support.webhook_deliveries import signed_delivery

SECRET = "whsec_" + base64.b64encode(b"a key of thirty-two bytes, or so").decode()
signed = partial(signed_delivery, secret=SECRET)


async def test_a_captured_delivery_cannot_be_moved_to_another_thread(make_app: AppFactory) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)], event_secrets={"chat": SECRET})
    async with running_worker(app), served(app) as http:
        busy = await app.stream("chat", "one", memory={"thread": "A", "resource": "R"})
        body, headers = signed({"alert": "disk full", "memory": {"thread": "A", "resource": "R"}}, webhook_id="X")

        queued = await http.post("/agents/chat/events?thread=A&resource=R", content=body, headers=headers)
        assert (queued.status_code, queued.json()) == (202, {"runId": "event-chat-X", "duplicate": False})

        # The same bytes and headers, sent by whoever captured them, to another tenant's thread: refused.
        moved = await http.post("/agents/chat/events?thread=B&resource=R2", content=body, headers=headers)
        assert (moved.status_code, moved.json()) == (
            400,
            {
                "error": 'the delivery is bound to thread "A" of resource "R" (its signed body\'s "memory"); it cannot '
                'be sent to thread "B" of resource "R2"'
            },
        )
        # The first answer said the run waits behind the thread's active run.
        assert queued.headers["x-thread-outcome"] == "queued"
        assert queued.headers["x-thread-active-run"] == busy.run_id
        assert queued.headers["x-thread-position"] == "1"
        # Sent again as it was signed: the same run, which the thread holds.
        again = await http.post("/agents/chat/events", content=body, headers=headers)
        assert (again.status_code, again.json()) == (200, {"runId": "event-chat-X", "duplicate": True})
        assert again.headers["x-thread-outcome"] == "duplicate"

        # A thread named only in the URL is not covered by the signature: refused, nothing starts.
        bare, bare_headers = signed({"alert": "cpu hot"}, webhook_id="Y")
        unsigned = await http.post("/agents/chat/events?thread=B&resource=R2", content=bare, headers=bare_headers)
        assert (unsigned.status_code, unsigned.json()["error"]) == (
            400,
            'the delivery names no thread (its signed body\'s "memory"): a thread and resource given outside it are '
            "not covered by its signature and are refused",
        )

        other = await app.thread("B", resource_id="R2")
        assert (other.active, other.queued, other.done) == ([], [], [])
        gate.open()
        assert await busy.text == "one after 1"
        assert (await app.attach("event-chat-X").text).endswith("after 2")  # on thread A, after its first run
    assert [m["role"] for m in await app.store.get_thread_messages("A", "R")] == ["user", "assistant"] * 2
    assert await app.store.get_thread_messages("B", "R2") == []


def tracker_source(**where: Any) -> WebhookSource:
    return WebhookSource(name="tracker", agent="chat", secrets=[SECRET], **where)


async def test_a_source_says_where_its_runs_land(make_app: AppFactory) -> None:
    gate = Gate(opened=True)
    sources = [
        tracker_source(resource="acme", thread_field="ticket.id"),
        WebhookSource(name="ci", agent="chat", tokens=["ci-token-1"], token_header="x-ci-token"),
    ]
    app = make_app([gated_agent(gate)], webhook_sources=sources)
    async with running_worker(app), served(app) as http:
        body, headers = signed({"ticket": {"id": 42, "subject": "refund"}}, webhook_id="t-1")
        started = await http.post("/events/tracker", content=body, headers=headers)
        assert (started.status_code, started.json()) == (202, {"runId": "webhook-tracker-t-1", "duplicate": False})
        assert started.headers["x-thread-outcome"] == "started"
        moved = await http.post("/events/tracker?thread=43&resource=acme", content=body, headers=headers)
        assert (moved.status_code, moved.json()["error"]) == (
            400,
            'the delivery is bound to thread "42" of resource "acme" (the source "tracker" says); it cannot be sent '
            'to thread "43" of resource "acme"',
        )
        same = await http.post("/events/tracker?thread=42&resource=acme", content=body, headers=headers)
        assert (same.status_code, same.json()["duplicate"]) == (200, True)
        nowhere, nowhere_headers = signed({"subject": "no ticket"}, webhook_id="t-2")
        missing = await http.post("/events/tracker", content=nowhere, headers=nowhere_headers)
        assert (missing.status_code, missing.json()["error"]) == (
            400,
            'the delivery has no thread: no "ticket.id" field (text or whole number)',
        )

        # A source that names no thread starts threadless runs: a thread in the URL is refused.
        token = {"x-ci-token": "ci-token-1", "webhook-id": "b-1"}
        refused = await http.post("/events/ci?thread=42&resource=acme", content=b'{"build": 1}', headers=token)
        assert (refused.status_code, refused.json()["error"]) == (
            400,
            'the delivery names no thread (the source "ci" says): a thread and resource given outside it are not '
            "covered by its signature and are refused",
        )
        threadless = await http.post("/events/ci", content=b'{"build": 1}', headers=token)
        assert threadless.status_code == 202 and "x-thread-outcome" not in threadless.headers
        assert (await app.attach("webhook-tracker-t-1").text).endswith("after 1")
    assert [m["role"] for m in await app.store.get_thread_messages("42", "acme")] == ["user", "assistant"]
    assert await app.store.get_thread_messages("43", "acme") == []


async def test_a_delivery_signed_with_the_app_wide_secret_cannot_start_another_agents_run(
    make_app: AppFactory,
) -> None:
    """An App-wide ``"*"`` secret verifies a delivery on every agent's route, and the URL is outside the signature:
    so such a delivery names its agent in its signed body, and sent again to another agent's route it is refused."""
    gate = Gate(opened=True)
    app = make_app([gated_agent(gate, "triage"), gated_agent(gate, "payments")], event_secrets={"*": SECRET})
    async with running_worker(app), served(app) as http:
        body, headers = signed({"agentId": "triage", "alert": "disk full"}, webhook_id="wide-1")
        accepted = await http.post("/agents/triage/events", content=body, headers=headers)
        assert (accepted.status_code, accepted.json()) == (202, {"runId": "event-triage-wide-1", "duplicate": False})

        # The same bytes and headers, sent by whoever captured them, to another agent's route: refused.
        moved = await http.post("/agents/payments/events", content=body, headers=headers)
        assert (moved.status_code, moved.json()) == (
            400,
            {
                "error": 'the delivery is for agent "triage" (its signed body\'s "agentId"); it cannot start a run of '
                'agent "payments"'
            },
        )
        # A delivery under the App-wide secret that names no agent could be sent to any route: refused.
        bare, bare_headers = signed({"alert": "cpu hot"}, webhook_id="wide-2")
        unnamed = await http.post("/agents/payments/events", content=bare, headers=bare_headers)
        assert (unnamed.status_code, unnamed.json()["error"]) == (
            400,
            'the delivery is signed with the App-wide secret ("*"), which covers every agent\'s route: its signed '
            'body must name its agent ("agentId": "payments")',
        )
        assert await app.attach("event-triage-wide-1").text == '{"agentId": "triage", "alert": "disk full"} after 1'
        for run_id in ("event-payments-wide-1", "event-payments-wide-2"):
            assert (await http.get(f"/runs/{run_id}")).status_code == 404


async def test_a_delivery_signed_with_the_agents_own_secret_needs_no_agent_in_its_body(make_app: AppFactory) -> None:
    other = "whsec_" + base64.b64encode(b"another key of thirty-two bytes!").decode()
    app = make_app(
        [gated_agent(Gate(opened=True), "triage"), gated_agent(Gate(opened=True), "payments")],
        event_secrets={"triage": SECRET, "*": other},
    )
    async with running_worker(app), served(app) as http:
        body, headers = signed({"alert": "disk full"}, webhook_id="own-1")
        accepted = await http.post("/agents/triage/events", content=body, headers=headers)
        assert (accepted.status_code, accepted.json()) == (202, {"runId": "event-triage-own-1", "duplicate": False})
        moved = await http.post("/agents/payments/events", content=body, headers=headers)
        assert moved.status_code == 401  # the agent's own secret does not verify on another agent's route
