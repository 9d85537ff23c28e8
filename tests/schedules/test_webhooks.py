"""Runs started by webhooks over HTTP (``POST /api/agents/:id/events``): a good delivery starts one run that
finishes; forged, replayed (old timestamp) and malformed deliveries start nothing; the same event twice is one run."""

from __future__ import annotations

import base64
import json
import time
from functools import partial
from typing import Any

from temporalio.client import Client

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.ingress.webhooks import sign_webhook
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import served
from tests.support.webhook_deliveries import signed_delivery

SECRET = "whsec_" + base64.b64encode(b"a key of thirty-two bytes, or so").decode()
TOKENS = {"tok-ops": "ops"}
AUTH = {"authorization": "Bearer tok-ops"}


def triage(model: ScriptedModel) -> Agent:
    return Agent(id="triage", name="Triage", model=model)


def render_ticket(payload: Any) -> str:
    return f"New ticket #{payload['id']} from {payload['customer']}: {payload['subject']}"


delivery = partial(signed_delivery, secret=SECRET)
"""A delivery of a payload signed with this file's secret (``secret=`` for another)."""


async def runs_of_agent(client: Client, task_queue: str) -> list[str]:
    query = f"TaskQueue = '{task_queue}'"
    return [execution.id async for execution in client.list_workflows(query)]


def user_texts(model: ScriptedModel) -> list[str]:
    texts: list[str] = []
    for request in model.requests:
        assert isinstance(request, ModelRequest)
        for message in request.messages:
            if message.role == "user":
                texts.append(str(message.content))
    return texts


async def test_a_signed_event_starts_one_run_and_a_duplicate_starts_none(make_app: AppFactory, client: Client) -> None:
    model = ScriptedModel([ScriptedResponse(text="assigned to billing")])
    app = make_app([triage(model)], event_secrets={"triage": SECRET}, event_templates={"ticket": render_ticket})
    ticket = {"id": 42, "customer": "Acme", "subject": "invoice twice"}
    body, headers = delivery(ticket, webhook_id="msg_2f4a")
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        first = await http.post("/agents/triage/events?template=ticket", content=body, headers=headers)
        assert first.status_code == 202, first.text
        run_id = first.json()["runId"]
        assert first.json() == {"runId": "event-triage-msg_2f4a", "duplicate": False}
        result = await client.get_workflow_handle(run_id, result_type=RunResult).result()
        assert result.finish_reason == "stop"
        assert await app.attach(run_id).text == "assigned to billing"
        assert "New ticket #42 from Acme: invoice twice" in " ".join(user_texts(model))

        # The sender retries the same event (same webhook-id), before and after the run closed: one run.
        again = await http.post("/agents/triage/events?template=ticket", content=body, headers=headers)
        assert again.status_code == 200
        assert again.json() == {"runId": run_id, "duplicate": True}
        assert await runs_of_agent(client, app.task_queue) == [run_id]
        assert len(model.requests) == 1

        # Erased on request, then delivered once more: still a duplicate, and nothing starts under the erased id.
        assert (await app.erase(run=run_id)).deleted_runs == [run_id]
        after = await http.post("/agents/triage/events?template=ticket", content=body, headers=headers)
        assert after.status_code == 200 and after.json() == {"runId": run_id, "duplicate": True}, after.text
        assert await app.store.read_chunks(run_id) == [] and len(model.requests) == 1


async def test_forged_replayed_and_malformed_deliveries_start_nothing(make_app: AppFactory, client: Client) -> None:
    model = ScriptedModel([ScriptedResponse(text="never")])
    app = make_app([triage(model)], event_secrets={"triage": SECRET})
    ticket = {"id": 7, "customer": "Mallory", "subject": "refund me"}
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        # Signed with another secret.
        body, headers = delivery(
            ticket, webhook_id="msg_forged", secret="whsec_" + base64.b64encode(b"x" * 32).decode()
        )
        answer = await http.post("/agents/triage/events", content=body, headers=headers)
        assert (answer.status_code, answer.json()) == (
            401,
            {"error": "no webhook-signature matches: the delivery is refused"},
        )
        # A good signature over another body.
        body, headers = delivery(ticket, webhook_id="msg_tampered")
        tampered = body.replace(b"refund me", b"refund all")
        assert (await http.post("/agents/triage/events", content=tampered, headers=headers)).status_code == 401
        # A captured delivery sent again an hour later (its signature is good, its timestamp old).
        body, headers = delivery(ticket, webhook_id="msg_old", sent=int(time.time()) - 3600)
        answer = await http.post("/agents/triage/events", content=body, headers=headers)
        assert (answer.status_code, answer.json()["error"]) == (
            400,
            "webhook-timestamp is too old: the delivery is refused as a replay",
        )
        body, headers = delivery(ticket, webhook_id="msg_future", sent=int(time.time()) + 3600)
        assert (await http.post("/agents/triage/events", content=body, headers=headers)).status_code == 400
        # Headers missing.
        answer = await http.post("/agents/triage/events", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 400
        assert answer.json()["error"] == "missing webhook header(s): webhook-id, webhook-timestamp, webhook-signature"
        # Signed, but not JSON.
        raw = b"not json"
        stamp = int(time.time())
        signed = {
            "webhook-id": "msg_raw",
            "webhook-timestamp": str(stamp),
            "webhook-signature": sign_webhook(SECRET, "msg_raw", stamp, raw),
        }
        answer = await http.post("/agents/triage/events", content=raw, headers=signed)
        assert (answer.status_code, answer.json()["error"]) == (400, "the delivery's body is not JSON")
        # Signed, but empty: not JSON either (no run whose message is null).
        signed["webhook-id"] = "msg_empty"
        signed["webhook-signature"] = sign_webhook(SECRET, "msg_empty", stamp, b"")
        answer = await http.post("/agents/triage/events", content=b"", headers=signed)
        assert (answer.status_code, answer.json()["error"]) == (400, "the delivery's body is not JSON")
        # An agent that was given no secret takes no events: its route keeps needing a token, and says so.
        assert (await http.post("/agents/nobody/events", content=body, headers=headers)).status_code == 401
        with_token = {**headers, **AUTH}
        answer = await http.post("/agents/nobody/events", content=body, headers=with_token)
        assert (answer.status_code, answer.json()["error"]) == (404, "Agent with id nobody not found")

        assert await runs_of_agent(client, app.task_queue) == []
        assert model.requests == []


async def test_a_payload_the_template_cannot_render_is_a_422_and_starts_nothing(
    make_app: AppFactory, client: Client
) -> None:
    model = ScriptedModel([ScriptedResponse(text="never")])
    app = make_app([triage(model)], event_secrets={"triage": SECRET}, event_templates={"ticket": render_ticket})
    async with running_worker(app), served(app) as http:
        body, headers = delivery({"customer": "Acme", "subject": "no id"}, webhook_id="msg_no_id")
        answer = await http.post("/agents/triage/events?template=ticket", content=body, headers=headers)
        assert (answer.status_code, answer.json()) == (
            422,
            {"error": 'the event template "ticket" cannot render this payload: it has no "id"; nothing was started'},
        )
        body, headers = delivery(["a", "list"], webhook_id="msg_list")
        answer = await http.post("/agents/triage/events?template=ticket", content=body, headers=headers)
        assert (answer.status_code, answer.json()["error"]) == (
            422,
            'the event template "ticket" cannot render this payload: list indices must be integers or slices, not '
            "str; nothing was started",
        )
        assert await runs_of_agent(client, app.task_queue) == []
        assert model.requests == []


async def test_other_routes_still_need_a_token(make_app: AppFactory) -> None:
    quiet = Agent(id="quiet", model=ScriptedModel([]))
    app = make_app([triage(ScriptedModel([])), quiet], event_secrets={"triage": SECRET})
    async with served(app, tokens=TOKENS) as http:
        assert (await http.get("/agents")).status_code == 401
        assert (await http.get("/schedules")).status_code == 401
        # An agent given no secret takes no events: its route needs a token, and then says so.
        body, headers = delivery({"id": 1}, webhook_id="msg_q")
        assert (await http.post("/agents/quiet/events", content=body, headers=headers)).status_code == 401
        answer = await http.post("/agents/quiet/events", content=body, headers={**headers, **AUTH})
        assert (answer.status_code, answer.json()) == (404, {"error": "Agent with id quiet takes no events"})
        body, headers = delivery({"id": 1}, webhook_id="msg_x", sent=0)
        # The events route is open to senders (the signature is checked, not a token): this one is too old.
        assert (await http.post("/agents/triage/events", content=body, headers=headers)).status_code == 400


async def test_an_app_wide_secret_and_the_payload_as_message(make_app: AppFactory, client: Client) -> None:
    model = ScriptedModel([ScriptedResponse(text="noted")])
    app = make_app([triage(model)], event_secrets={"*": ["whsec_old", SECRET]})  # rotating: either one verifies
    async with running_worker(app), served(app) as http:
        # signed with the payload: its thread and (under the App-wide secret) its agent
        alert = {"agentId": "triage", "alert": "disk full", "memory": {"thread": "ops", "resource": "infra"}}
        body, headers = delivery(alert, webhook_id="alert-1")
        answer = await http.post("/agents/triage/events?thread=ops&resource=infra", content=body, headers=headers)
        assert answer.status_code == 202, answer.text
        run_id = answer.json()["runId"]
        assert await app.attach(run_id).text == "noted"
        assert json.dumps(alert) in " ".join(user_texts(model))  # no template: the payload's JSON
        memory = await app.store.get_thread_messages("ops", "infra")
        assert [message["role"] for message in memory] == ["user", "assistant"]
        unknown = await http.post("/agents/triage/events?template=nope", content=body, headers=headers)
        assert (unknown.status_code, unknown.json()["error"]) == (
            400,
            'no event template "nope" is registered on the App (registered: none)',
        )
