"""Slack-compatible messages and email (a real SMTP server), channels chosen per tool, per agent and per App, answer
links plugged in, and settings read from a JSON or TOML file with secrets from the environment."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from pathlib import Path

import pytest

from tempo_agents import Agent, AnswerLinks, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.errors import ConfigurationError
from tempo_agents.notifications import EmailChannel, NotificationSettings, SlackChannel, WebhookChannel
from tempo_agents.notifications.config_file import load_notification_settings
from tests.conftest import AppFactory, running_worker
from tests.support.notification_receivers import (
    Mailbox,
    WebhookReceiver,
    settled_deliveries,
    smtp_server,
    webhook_receiver,
)
from tests.support.polling import until

LINKS = AnswerLinks(["link-secret-for-tests"], base_url="https://agents.example.test")
LINK_PREFIX = "https://agents.example.test/api/answer-links/"


def link_claims(url: str) -> tuple[str, str, int, str, str]:
    """What a one-click link in a message answers: its run, call, round, answer and principal."""
    assert url.startswith(LINK_PREFIX)
    claims = LINKS.verify(url.removeprefix(LINK_PREFIX))
    return (claims.run_id, claims.tool_call_id, claims.round, claims.choice.name, claims.principal)


async def test_slack_and_email_of_a_tool_and_the_agents_own_channel(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    ops, chat = WebhookReceiver(), WebhookReceiver()
    with webhook_receiver(ops), webhook_receiver(chat), smtp_server() as (smtp_port, mails):
        settings = NotificationSettings(
            channels=[
                WebhookChannel(name="ops", url=ops.url),
                SlackChannel(name="chat", url=chat.url),
                EmailChannel(name="mail", host="127.0.0.1", port=smtp_port, sender="agents@example.test", to=["a@x"]),
            ],
            public_url="https://agents.example.test",
            first_retry=timedelta(milliseconds=100),
        )
        pay = create_tool(
            id="pay",
            description="Pays an invoice",
            input_schema={"type": "object", "properties": {"invoice": {"type": "string"}}},
            execute=lambda data: "paid",
            require_approval=True,
            notify=["chat", "mail"],
            transform={"display": {"approval": lambda ctx: {**ctx.input, "iban": "hidden"}}},
        )
        model = ScriptedModel(
            [
                ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"invoice": "F-12", "iban": "DE00 1234"})]),
                ScriptedResponse(text="Paid."),
            ]
        )
        agent = Agent(id="payer", model=model, tools={"pay": pay}, notify=["ops"])
        app = make_app([agent], notifications=settings, answer_links=LINKS)
        async with running_worker(app):
            stream = await app.agent("payer").stream("pay F-12")
            await stream.result()
            await until(lambda: len(chat.deliveries) >= 1 and len(mails) >= 1, timeout=60)
            answer = await app.approve_tool_call("payer", run_id=stream.run_id, answered_by="lin")
            await answer.result()
            await until(lambda: len(ops.events) >= 1 and len(chat.deliveries) >= 2 and len(mails) >= 2, timeout=60)

    run_id = stream.run_id
    # the tool's channels hear of its call; the agent's of the run's end
    assert [e["type"] for e in ops.events] == ["run.finished"]
    slack = json.loads(chat.deliveries[0][2])
    assert slack["text"] == f"Approval needed: pay in run {run_id} (payer)"
    assert [block["type"] for block in slack["blocks"]] == ["section", "section", "actions"]
    assert "hidden" in slack["blocks"][1]["text"]["text"] and "DE00" not in json.dumps(slack)
    buttons = slack["blocks"][2]["elements"]
    assert [(b["type"], b["text"]["text"]) for b in buttons] == [
        ("button", "Approve"),
        ("button", "Decline"),
        ("button", "Open in dashboard"),
    ]
    assert [link_claims(b["url"]) for b in buttons[:2]] == [
        (run_id, "call_0_0", 0, "approve", "answer-link"),
        (run_id, "call_0_0", 0, "decline", "answer-link"),
    ]
    assert buttons[2]["url"] == f"https://agents.example.test/#/runs/{run_id}"
    assert json.loads(chat.deliveries[1][2])["text"] == f"Answered (approve) by lin: pay in run {run_id} (payer)"
    envelope, mail = mails[0]
    assert envelope.mail_from == "agents@example.test" and envelope.rcpt_tos == ["a@x"]
    assert str(mail["Subject"]).strip() == f"Approval needed: pay in run {run_id} (payer)"
    assert mail.get_content_type() == "multipart/alternative"
    parts = {part.get_content_type(): part.get_content() for part in mail.iter_parts()}
    assert set(parts) == {"text/plain", "text/html"}
    approve_line = next(line for line in parts["text/plain"].splitlines() if line.startswith("Approve: "))
    # the mail's links are its recipient's own: they answer as the recipient (no principal mapped: the address)
    assert link_claims(approve_line.removeprefix("Approve: ")) == (run_id, "call_0_0", 0, "approve", "a@x")
    assert "<a href='https://agents.example.test/#/runs/" in parts["text/html"]
    assert "DE00" not in parts["text/plain"] + parts["text/html"]
    assert chat.url not in caplog.text  # a Slack incoming-webhook URL is a credential: never logged
    assert "chat" in caplog.text  # the deliveries to it were logged, by the channel's name


def test_settings_from_json_and_toml_with_secrets_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_SECRET", "whsec_c2VjcmV0LWZyb20tZW52")
    monkeypatch.setenv("SLACK_URL", "https://hooks.example.test/T/B/xyz")
    monkeypatch.setenv("SMTP_PASSWORD", "pw-from-env")
    (tmp_path / "n.toml").write_text(
        """
public_url = "https://agents.example.test"
retry_for = 7200
default = ["ops"]

[[channels]]
type = "webhook"
name = "ops"
url = "https://ops.example.test/hook"
secrets_env = ["HOOK_SECRET"]

[[channels]]
type = "slack"
name = "chat"
url_env = "SLACK_URL"

[[channels]]
type = "email"
name = "mail"
host = "smtp.example.test"
port = 587
starttls = true
sender = "agents@example.test"
to = ["oncall@example.test"]
username = "agents"
password_env = "SMTP_PASSWORD"
"""
    )
    settings = load_notification_settings(tmp_path / "n.toml")
    assert settings.retry_for == timedelta(hours=2)
    assert settings.chosen(None) == ["ops"]
    assert [c.type for c in settings.channels] == ["webhook", "slack", "email"]
    assert settings.channels[0].secrets == ["whsec_c2VjcmV0LWZyb20tZW52"]  # type: ignore[union-attr]
    shown = repr(settings)
    assert "c2VjcmV0" not in shown and "hooks.example.test" not in shown and "pw-from-env" not in shown

    (tmp_path / "n.json").write_text(json.dumps({"channels": [{"type": "webhook", "name": "x", "url": "u"}]}))
    assert load_notification_settings(tmp_path / "n.json").chosen(None) == ["x"]

    monkeypatch.delenv("HOOK_SECRET")
    with pytest.raises(ConfigurationError, match="environment variable HOOK_SECRET is not set"):
        load_notification_settings(tmp_path / "n.toml")
    (tmp_path / "bad.json").write_text(json.dumps({"channels": [{"type": "pager", "name": "x"}]}))
    with pytest.raises(ConfigurationError, match=r"bad\.json"):
        load_notification_settings(tmp_path / "bad.json")


def test_a_channel_an_agent_names_must_exist(make_app: AppFactory) -> None:
    agent = Agent(id="typo", model=ScriptedModel([]), notify=["opps"])
    with pytest.raises(ConfigurationError, match=r"agent \"typo\" names notification channel\(s\) \['opps'\]"):
        make_app([agent], notifications=NotificationSettings(channels=[WebhookChannel(name="ops", url="u")]))


async def test_a_mail_attempt_that_timed_out_is_cut_so_no_late_copy_arrives(make_app: AppFactory) -> None:
    # the mail server holds the first message longer than an attempt may take, then takes it only if the sender
    # is still connected: an attempt that timed out must not deliver it late, beside its retry's copy
    mailbox = Mailbox()
    mailbox.hang, mailbox.hang_first = 8.0, 1
    with smtp_server(mailbox) as (smtp_port, mails):
        settings = NotificationSettings(
            channels=[EmailChannel(name="mail", host="127.0.0.1", port=smtp_port, sender="a@x", to=["b@x"])],
            attempt_timeout=timedelta(seconds=2),
            first_retry=timedelta(milliseconds=100),
        )
        agent = Agent(
            id="mailer",
            model=ScriptedModel([ScriptedResponse(tool_calls=[ScriptedToolCall("ship", {"to": "ada"})])]),
            tools={"ship": create_tool(id="ship", description="Ships", execute=lambda d: "ok", require_approval=True)},
        )
        app = make_app([agent], notifications=settings)
        async with running_worker(app):
            stream = await app.agent("mailer").stream("ship")
            assert (await stream.result()).finish_reason == "suspended"
            records = await settled_deliveries(app, stream.run_id, 1)
            await until(lambda: mailbox.held == 1, timeout=60)  # the held message has ended, one way or the other

    assert [(r.event_type, r.status, r.attempts) for r in records] == [("call.waiting", "delivered", 2)]
    assert mailbox.abandoned == 1
    subjects = [str(mail["Subject"]).strip().split(":")[0] for _, mail in mails]
    assert subjects == ["Approval needed"]  # one copy, the retry's


async def test_mail_and_slack_tell_parallel_calls_of_one_tool_apart(make_app: AppFactory) -> None:
    chat = WebhookReceiver()
    with webhook_receiver(chat), smtp_server() as (smtp_port, mails):
        settings = NotificationSettings(
            channels=[
                SlackChannel(name="chat", url=chat.url),
                EmailChannel(name="mail", host="127.0.0.1", port=smtp_port, sender="agents@x", to=["ops@x"]),
            ],
            first_retry=timedelta(milliseconds=100),
        )
        delete = create_tool(
            id="delete_file", description="Deletes a file", execute=lambda data: "deleted", require_approval=True
        )
        calls = [ScriptedToolCall("delete_file", {"path": "same.txt"}, id=f"call-{n}") for n in "abc"]
        model = ScriptedModel([ScriptedResponse(tool_calls=calls), ScriptedResponse(text="Deleted.")])
        app = make_app([Agent(id="cleaner", model=model, tools={"delete_file": delete})], notifications=settings)
        async with running_worker(app):
            first = await app.agent("cleaner").generate("delete same.txt three times")
            assert first.finish_reason == "suspended"
            records = await settled_deliveries(app, first.run_id, 6)

    assert sorted(r.status for r in records) == ["delivered"] * 6
    run_id = first.run_id
    expected = {f"Approval needed: delete_file (call {n} of 3) in run {run_id} (cleaner)" for n in (1, 2, 3)}
    slack = [json.loads(body) for _, _, body in chat.deliveries]
    assert {message["text"] for message in slack} == expected
    facts = sorted(line for m in slack for line in m["blocks"][1]["text"]["text"].splitlines() if "*Call:*" in line)
    assert facts == [
        f"*Call:* call-{c}, {n} of 3 delete_file calls made together" for n, c in ((1, "a"), (2, "b"), (3, "c"))
    ]
    assert {str(mail["Subject"]).strip() for _, mail in mails} == expected
    plain = [
        next(p for p in mail.iter_parts() if p.get_content_type() == "text/plain").get_content() for _, mail in mails
    ]
    call_lines = sorted(line for text in plain for line in text.splitlines() if line.startswith("Call: "))
    assert call_lines == [
        f"Call: call-{c}, {n} of 3 delete_file calls made together" for n, c in ((1, "a"), (2, "b"), (3, "c"))
    ]
