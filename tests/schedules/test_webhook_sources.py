"""Configured webhook sources (``POST /api/events/{source}``): a Standard Webhooks source and a shared-token source,
each delivery verified as its source says and de-duplicated by the sender's event id; forged, replayed, wrong-token
and duplicate deliveries start nothing more; no secret reaches a log, the journal, the history or an answer; sources
from a TOML file whose secrets come from environment variables, also through ``tempo-agents serve``."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import signal
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tempo_agents import (
    Agent,
    App,
    ScriptedModel,
    ScriptedResponse,
    WebhookSource,
    load_webhook_sources,
    sign_webhook,
)
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.payloads import RunResult
from tests.conftest import AppFactory, running_worker
from tests.support.cli_processes import read_until, start_cli, stop_cli
from tests.support.http_api import served
from tests.support.webhook_deliveries import signed_delivery

SECRET = "whsec_" + base64.b64encode(b"tracker key: thirty-two bytes ok").decode()
TOKEN = "ci-token-5b1f0e9d8c7a"
TOKENS = {"tok-ops": "ops"}


def render_ticket(payload: Any) -> str:
    return f"Ticket #{payload['id']}: {payload['subject']}"


def render_build(payload: Any) -> str:
    return f"Build {payload['build']['id']} {payload['build']['status']}"


signed = partial(signed_delivery, secret=SECRET)
"""A delivery of a payload signed with this file's secret (``secret=`` for another)."""


def build(build_id: int, status: str = "failed") -> bytes:
    return json.dumps({"build": {"id": build_id, "status": status}}).encode()


def sources() -> list[WebhookSource]:
    return [
        WebhookSource(name="tracker", agent="triage", secrets=[SECRET], template="ticket"),
        WebhookSource(
            name="ci", agent="triage", tokens=[TOKEN], token_header="X-CI-Token", template="build",
            event_id_field="build.id",
        ),
    ]  # fmt: skip


def make_triage(make_app: AppFactory, model: ScriptedModel) -> App:
    return make_app(
        [Agent(id="triage", model=model)],
        event_templates={"ticket": render_ticket, "build": render_build},
        webhook_sources=sources(),
    )


async def runs_on(client: Client, task_queue: str) -> list[str]:
    return sorted([execution.id async for execution in client.list_workflows(f"TaskQueue = '{task_queue}'")])


def user_texts(model: ScriptedModel) -> list[str]:
    texts = []
    for request in model.requests:
        assert isinstance(request, ModelRequest)
        texts += [str(message.content) for message in request.messages if message.role == "user"]
    return texts


async def test_a_standard_webhooks_source_runs_a_good_delivery_once(make_app: AppFactory, client: Client) -> None:
    model = ScriptedModel([ScriptedResponse(text="billing has it")])
    app = make_triage(make_app, model)
    body, headers = signed({"id": 42, "subject": "charged twice"}, webhook_id="msg_7c1")
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        first = await http.post("/events/tracker", content=body, headers=headers)
        assert (first.status_code, first.json()) == (202, {"runId": "webhook-tracker-msg_7c1", "duplicate": False})
        result = await client.get_workflow_handle("webhook-tracker-msg_7c1", result_type=RunResult).result()
        assert result.finish_reason == "stop"
        assert "Ticket #42: charged twice" in " ".join(user_texts(model))
        # The sender delivers it again, after the run closed: one run.
        again = await http.post("/events/tracker", content=body, headers=headers)
        assert (again.status_code, again.json()) == (200, {"runId": "webhook-tracker-msg_7c1", "duplicate": True})
        assert await runs_on(client, app.task_queue) == ["webhook-tracker-msg_7c1"]
        assert len(model.requests) == 1


async def test_forged_and_replayed_deliveries_of_a_source_start_nothing(make_app: AppFactory, client: Client) -> None:
    model = ScriptedModel([ScriptedResponse(text="never")])
    app = make_triage(make_app, model)
    ticket = {"id": 9, "subject": "refund"}
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        other = "whsec_" + base64.b64encode(b"y" * 32).decode()
        body, headers = signed(ticket, webhook_id="msg_forged", secret=other)
        answer = await http.post("/events/tracker", content=body, headers=headers)
        assert (answer.status_code, answer.json()) == (
            401,
            {"error": "no webhook-signature matches: the delivery is refused"},
        )
        body, headers = signed(ticket, webhook_id="msg_tampered")
        tampered = await http.post("/events/tracker", content=body.replace(b"refund", b"refund all"), headers=headers)
        assert tampered.status_code == 401
        body, headers = signed(ticket, webhook_id="msg_old", sent=int(time.time()) - 3600)
        answer = await http.post("/events/tracker", content=body, headers=headers)
        assert (answer.status_code, answer.json()["error"]) == (
            400,
            "webhook-timestamp is too old: the delivery is refused as a replay",
        )
        body, headers = signed(ticket, webhook_id="msg_new", sent=int(time.time()) + 3600)
        answer = await http.post("/events/tracker", content=body, headers=headers)
        assert (answer.status_code, answer.json()["error"]) == (400, "webhook-timestamp is in the future")
        # A Standard Webhooks source takes no token instead of a signature.
        answer = await http.post("/events/tracker", content=body, headers={"x-ci-token": TOKEN})
        assert answer.status_code == 400
        # An unknown source is no open route: it needs a bearer token, then is a 404.
        body, headers = signed(ticket, webhook_id="msg_x")
        assert (await http.post("/events/nobody", content=body, headers=headers)).status_code == 401
        answer = await http.post("/events/nobody", content=body, headers={**headers, "authorization": "Bearer tok-ops"})
        assert (answer.status_code, answer.json()["error"]) == (404, "No webhook source of that name is configured")
        assert await runs_on(client, app.task_queue) == []
        assert model.requests == []


async def test_a_token_source_checks_its_header_and_keys_runs_by_the_payloads_event_id(
    make_app: AppFactory, client: Client
) -> None:
    model = ScriptedModel([ScriptedResponse(text="looking into it")])
    app = make_triage(make_app, model)
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        wrong = await http.post("/events/ci", content=build(981), headers={"x-ci-token": TOKEN[:-1] + "X"})
        assert (wrong.status_code, wrong.json()) == (
            401,
            {"error": "the x-ci-token header does not match: the delivery is refused"},
        )
        missing = await http.post("/events/ci", content=build(981), headers={"authorization": "Bearer tok-ops"})
        assert (missing.status_code, missing.json()) == (
            401,
            {"error": "missing x-ci-token header: the delivery is refused"},
        )
        no_id = await http.post("/events/ci", content=b'{"build": {"status": "failed"}}', headers={"x-ci-token": TOKEN})
        assert (no_id.status_code, no_id.json()["error"]) == (
            400,
            'the delivery has no event id: no webhook-id header nor a "build.id" field',
        )
        assert await runs_on(client, app.task_queue) == []

        # The same build delivered twice, the sender retrying with the same event id (its body may differ): one run.
        first, second = await asyncio.gather(
            http.post("/events/ci", content=build(981), headers={"x-ci-token": TOKEN}),
            http.post("/events/ci", content=build(981, "failed again"), headers={"x-ci-token": TOKEN}),
        )
        assert sorted([first.status_code, second.status_code]) == [200, 202]
        assert {first.json()["runId"], second.json()["runId"]} == {"webhook-ci-981"}
        assert await app.attach("webhook-ci-981").text == "looking into it"
        # A webhook-id header, when the sender sends one, is the event id.
        other = await http.post("/events/ci", content=build(981), headers={"x-ci-token": TOKEN, "webhook-id": "b-982"})
        assert (other.status_code, other.json()["runId"]) == (202, "webhook-ci-b-982")
        assert await app.attach("webhook-ci-b-982").text == "looking into it"
        assert await runs_on(client, app.task_queue) == ["webhook-ci-981", "webhook-ci-b-982"]
        assert len(model.requests) == 2
        assert " ".join(user_texts(model)).count("Build 981 failed") == 2  # rendered by the source's template


async def test_a_payload_its_template_cannot_render_and_an_empty_body_start_nothing(
    make_app: AppFactory, client: Client
) -> None:
    model = ScriptedModel([ScriptedResponse(text="never")])
    app = make_triage(make_app, model)
    token = {"x-ci-token": TOKEN}
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        # Senders retry a 5xx for hours, and this payload will never render: a 422 naming what is missing.
        no_status = await http.post("/events/ci", content=b'{"build": {"id": 5}}', headers=token)
        assert (no_status.status_code, no_status.json()) == (
            422,
            {"error": 'the event template "build" cannot render this payload: it has no "status"; nothing was started'},
        )
        listed = await http.post("/events/ci", content=b"[1, 2]", headers={**token, "webhook-id": "b-6"})
        assert (listed.status_code, listed.json()["error"]) == (
            422,
            'the event template "build" cannot render this payload: list indices must be integers or slices, not '
            "str; nothing was started",
        )
        body, headers = signed({"subject": "no id"}, webhook_id="msg_no_id")
        no_id = await http.post("/events/tracker", content=body, headers=headers)
        assert (no_id.status_code, no_id.json()["error"]) == (
            422,
            'the event template "ticket" cannot render this payload: it has no "id"; nothing was started',
        )
        # An empty body is not JSON, signed or not.
        empty, empty_headers = b"", signed({}, webhook_id="msg_empty")[1]
        empty_headers["webhook-signature"] = sign_webhook(
            SECRET, "msg_empty", int(empty_headers["webhook-timestamp"]), empty
        )
        for answer in (
            await http.post("/events/tracker", content=empty, headers=empty_headers),
            await http.post("/events/ci", content=empty, headers={**token, "webhook-id": "b-7"}),
        ):
            assert (answer.status_code, answer.json()["error"]) == (400, "the delivery's body is not JSON")
        assert await runs_on(client, app.task_queue) == []
        assert model.requests == []


async def test_no_secret_in_logs_journal_history_or_answers(
    make_app: AppFactory, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    model = ScriptedModel([ScriptedResponse(text="ok"), ScriptedResponse(text="ok")])
    app = make_triage(make_app, model)
    answers: list[str] = []
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        body, headers = signed({"id": 1, "subject": "s"}, webhook_id="msg_s1")
        for attempt in (
            http.post("/events/tracker", content=body, headers=headers),
            http.post("/events/tracker", content=body, headers=headers),
            http.post("/events/ci", content=build(5), headers={"x-ci-token": TOKEN}),
            http.post("/events/ci", content=build(5), headers={"x-ci-token": TOKEN + "x"}),
            http.post("/events/ci", content=build(5), headers={"x-ci-token": TOKEN[:4]}),
            http.post("/events/ci", content=b"{}", headers={"x-ci-token": TOKEN}),
        ):
            answer = await attempt
            answers.append(f"{answer.status_code} {answer.headers} {answer.text}")
        for run_id in ("webhook-tracker-msg_s1", "webhook-ci-5"):
            await client.get_workflow_handle(run_id).result()
            answers.append(json.dumps([entry.chunk for entry in await app.store.read_chunks(run_id)]))
            answers.append((await client.get_workflow_handle(run_id).fetch_history()).to_json())
            answers.append(json.dumps(await (await client.get_workflow_handle(run_id).describe()).memo()))
    answers.append(repr(app.webhook_sources))
    answers.append(caplog.text)
    everything = "\n".join(answers)
    key = base64.b64decode(SECRET.removeprefix("whsec_")).decode()
    for secret in (SECRET, SECRET.removeprefix("whsec_"), key, TOKEN, TOKEN[:-1]):
        assert secret not in everything
    assert "webhook-ci-5" in everything and caplog.records  # what was searched holds the runs and the logs


def test_sources_from_a_toml_file_take_their_secrets_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(
        """
[sources.tracker]
agent = "triage"
template = "ticket"
secret_envs = ["TRACKER_OLD", "TRACKER_NEW"]
tolerance_seconds = 60

[sources.ci]
agent = "triage"
token_env = "CI_TOKEN"
token_header = "X-CI-Token"
event_id_field = "build.id"
resource = "acme"
thread_field = "build.branch"
"""
    )
    environ = {"TRACKER_OLD": "whsec_b2xk", "TRACKER_NEW": SECRET, "CI_TOKEN": TOKEN}
    tracker, ci = load_webhook_sources(path, environ)
    assert (tracker.name, tracker.agent, tracker.template, tracker.secrets, tracker.verification) == (
        "tracker", "triage", "ticket", ("whsec_b2xk", SECRET), "standard-webhooks",
    )  # fmt: skip
    assert tracker.tolerance.total_seconds() == 60
    assert (ci.tokens, ci.token_header, ci.event_id_field, ci.verification) == (
        (TOKEN,), "x-ci-token", "build.id", "token",
    )  # fmt: skip
    assert SECRET not in repr(tracker) and TOKEN not in repr(ci)
    assert (ci.thread, ci.thread_field, ci.resource, ci.resource_field) == (None, "build.branch", "acme", None)
    assert (tracker.thread, tracker.resource) == (None, None)  # threadless runs

    with pytest.raises(ConfigurationError) as unset:
        load_webhook_sources(path, {"TRACKER_OLD": "a", "TRACKER_NEW": "b"})
    assert str(unset.value) == f"webhook source ci in {path}: the environment variable CI_TOKEN is not set"
    path.write_text('[sources.ci]\nagent = "triage"\ntoken = "ci-token-in-the-file"\n')
    with pytest.raises(ConfigurationError) as literal:
        load_webhook_sources(path, environ)
    assert "ci-token-in-the-file" not in str(literal.value)
    assert "unknown key(s) token (secrets come from environment variables" in str(literal.value)
    path.write_text('[sources.both]\nagent = "triage"\nsecret_env = "TRACKER_NEW"\ntoken_env = "CI_TOKEN"\n')
    with pytest.raises(ConfigurationError, match="needs exactly one of secrets"):
        load_webhook_sources(path, environ)
    path.write_text('[sources.ci]\nagent = "triage"\ntoken_env = "CI_TOKEN"\nthread = "t"\nthread_field = "x"\n')
    with pytest.raises(ConfigurationError, match='webhook source "ci" takes thread or thread_field, not both'):
        load_webhook_sources(path, environ)
    path.write_text('[sources.ci]\nagent = "triage"\ntoken_env = "CI_TOKEN"\nthread = "t"\n')
    with pytest.raises(ConfigurationError, match="a thread and a resource go together"):
        load_webhook_sources(path, environ)


def test_an_app_refuses_a_source_of_an_unknown_agent_or_template(make_app: AppFactory) -> None:
    app = make_app([Agent(id="triage", model=ScriptedModel([]))], event_templates={"ticket": render_ticket})
    with pytest.raises(ConfigurationError):
        app.add_webhook_sources([WebhookSource(name="s", agent="nobody", tokens=["t"])])
    with pytest.raises(ConfigurationError) as unknown:
        app.add_webhook_sources([WebhookSource(name="s", agent="triage", tokens=["t"], template="nope")])
    assert str(unknown.value) == (
        'webhook source "s" names the event template "nope", which is not registered on the App (registered: ticket)'
    )
    app.add_webhook_sources([WebhookSource(name="s", agent="triage", tokens=["t"])])
    with pytest.raises(ConfigurationError, match='webhook source "s" is configured twice'):
        app.add_webhook_sources([WebhookSource(name="s", agent="triage", tokens=["t"])])


SERVE_APP = """
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse

app = App(
    agents=[Agent(id="triage", model=ScriptedModel([ScriptedResponse(text="on it")]))],
    event_templates={"build": lambda payload: f"Build {payload['build']['id']} {payload['build']['status']}"},
)
"""


async def test_serve_takes_webhook_sources_from_a_file_and_the_environment(
    temporal_env: WorkflowEnvironment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ciapp.py").write_text(SERVE_APP)
    (tmp_path / "sources.toml").write_text(
        '[sources.ci]\nagent = "triage"\ntemplate = "build"\ntoken_env = "CI_TOKEN_FOR_TEST"\n'
        'token_header = "x-ci-token"\nevent_id_field = "build.id"\n'
    )
    task_queue = f"tq-{uuid.uuid4()}"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    worker_app = App(
        agents=[Agent(id="triage", model=ScriptedModel([ScriptedResponse(text="on it")]))],
        store=store,
        task_queue=task_queue,
        client=temporal_env.client,
    )
    monkeypatch.setenv("CI_TOKEN_FOR_TEST", TOKEN)  # the serve process inherits it
    serve = await start_cli(
        [
            "serve", "--app", "ciapp:app", "--address", temporal_env.client.service_client.config.target_host,
            "--task-queue", task_queue, "--store", store, "--api-port", "0", "--auth-token", "tok-ops",
            "--webhook-sources", "sources.toml",
        ],
        tmp_path,
    )  # fmt: skip
    try:
        line = await read_until(serve, "HTTP API at ")
        url = line.split("HTTP API at ", 1)[1].split()[0]
        async with running_worker(worker_app), httpx.AsyncClient(base_url=url, timeout=30) as http:
            refused = await http.post("/events/ci", content=build(77), headers={"x-ci-token": "guess"})
            assert refused.status_code == 401
            answer = await http.post("/events/ci", content=build(77), headers={"x-ci-token": TOKEN})
            assert (answer.status_code, answer.json()) == (202, {"runId": "webhook-ci-77", "duplicate": False})
            assert await worker_app.attach("webhook-ci-77").text == "on it"
    finally:
        code, stdout, stderr = await stop_cli(serve, signal.SIGINT)
        await worker_app.store.close()
    assert code == 0, stderr
    assert TOKEN not in stdout + stderr
