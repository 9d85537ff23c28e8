"""Answer links that know who clicked, against a real server, Temporal and SMTP server: each mail recipient gets
links of their own (a group's members expanded from the App's groups), a forwarded link still answers as the
person it was sent to and says so, a link for someone the call is not assigned to is refused by the run's rule,
and a tool with ``answer_requires_sign_in=True`` links to the dashboard, where only a signed-in approver answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

import httpx

from tempo_agents import App
from tempo_agents.approvals import AnswerLinks
from tempo_agents.notifications import EmailChannel, NotificationSettings, WebhookChannel
from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory, running_worker
from tests.support.approval_agents import TRANSFER_ARGS, payments_agent
from tests.support.notification_receivers import WebhookReceiver, smtp_server, webhook_receiver
from tests.support.polling import until

PUBLIC = "https://agents.example.test"
LINKS = AnswerLinks(["link-secret-personal-tests"], base_url=PUBLIC)
TOKENS = {"tok-alice-4d2": "alice", "tok-bob-8e1": "bob"}


@asynccontextmanager
async def served(app: App) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    server = ApiServer(app, port=0, tokens=TOKENS)
    await server.start()
    try:
        async with httpx.AsyncClient(timeout=60) as http:
            yield server.url, http
    finally:
        await server.stop()


def on_server(server_url: str, url: str) -> str:
    """A link of a message, opened on the test's server (the links name the public URL)."""
    assert url.startswith(f"{PUBLIC}/api/answer-links/"), url
    return server_url + url.removeprefix(PUBLIC)


def approve_link(mail: EmailMessage) -> str:
    plain = str(next(part for part in mail.iter_parts() if part.get_content_type() == "text/plain").get_content())
    line = next(line for line in plain.splitlines() if line.startswith("Approve: "))
    return line.removeprefix("Approve: ")


def principal_of(url: str) -> str:
    return LINKS.verify(url.rsplit("/", 1)[1]).principal


def settings(hook: WebhookReceiver, smtp_port: int | None = None) -> NotificationSettings:
    channels: list[Any] = [WebhookChannel(name="hook", url=hook.url)]
    if smtp_port is not None:
        channels.append(
            EmailChannel(
                name="mail",
                host="127.0.0.1",
                port=smtp_port,
                sender="agents@example.test",
                to=["carol@example.test", "dan@example.test", "mallory@example.test"],
                principals={"carol@example.test": "carol", "dan@example.test": "dan"},
            )
        )
    return NotificationSettings(channels=channels, public_url=PUBLIC, first_retry=timedelta(milliseconds=100))


async def test_each_recipient_gets_links_of_their_own_and_a_forwarded_link_answers_as_them(
    make_app: AppFactory,
) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, tool_approvers=["group:leads"])
    hook = WebhookReceiver()
    with webhook_receiver(hook), smtp_server() as (smtp_port, mails):
        groups = {"carol": ["leads"], "dan": ["leads", "ops"]}
        app = make_app([agent], notifications=settings(hook, smtp_port), answer_links=LINKS, groups=groups)
        async with running_worker(app), served(app) as (server_url, http):
            run_id = (await app.agent("payments").generate("pay")).run_id
            await until(lambda: len(mails) >= 3 and hook.events, timeout=60)
            by_recipient = {envelope.rcpt_tos[0]: mail for envelope, mail in mails}
            assert sorted(by_recipient) == ["carol@example.test", "dan@example.test", "mallory@example.test"]
            assert {to: str(mail["To"]) for to, mail in by_recipient.items()} == {to: to for to in by_recipient}
            links = {to: approve_link(mail) for to, mail in by_recipient.items()}
            assert {to: principal_of(url) for to, url in links.items()} == {
                "carol@example.test": "carol",
                "dan@example.test": "dan",
                "mallory@example.test": "mallory@example.test",
            }
            # the shared links of a call assigned to a group answer as nobody: they open the run in the dashboard
            [waiting] = hook.events
            dashboard = f"{PUBLIC}/#/runs/{run_id}"
            assert waiting["links"]["answers"] == {"approve": dashboard, "decline": dashboard}
            assert sorted(waiting["links"]["people"]) == ["carol", "dan", "mallory@example.test"]
            assert "buttons" not in waiting["links"]

            # carol forwards her mail to someone: whoever opens it answers as carol, and the page says so
            page = await http.get(on_server(server_url, links["carol@example.test"]))
            assert page.status_code == 200, page.text
            assert '<p id="answering-as">You are answering as <strong>carol</strong>.</p>' in page.text
            # mallory got the mail but is no member of the group: her link answers nothing
            for method in ("GET", "POST"):
                refused = await http.request(method, on_server(server_url, links["mallory@example.test"]))
                assert refused.status_code == 403
                assert "This call now waits for group:leads; this link no longer answers it." in refused.text
            assert await app.queries(run_id).answers() == []

            answered = await http.post(on_server(server_url, links["carol@example.test"]))
            assert answered.status_code == 200 and 'id="done">Approve: sent.' in answered.text
            await app.attach(run_id, follow="run").result()
            answers = await app.queries(run_id).answers()
            assert [(a.action, a.answered_by) for a in answers] == [("approve", "carol")]
    assert ran == [TRANSFER_ARGS]


async def test_a_call_that_needs_sign_in_links_to_the_dashboard_where_only_a_signed_in_approver_answers(
    make_app: AppFactory,
) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, tool_approvers=["alice"])
    agent.tools["transfer"].answer_requires_sign_in = True
    hook = WebhookReceiver()
    with webhook_receiver(hook):
        app = make_app([agent], notifications=settings(hook), answer_links=LINKS)
        async with running_worker(app), served(app) as (server_url, http):
            run_id = (await app.agent("payments").generate("pay")).run_id
            [waiting] = await until(lambda: hook.events, timeout=60)
            dashboard = f"{PUBLIC}/#/runs/{run_id}"
            assert waiting["links"]["answers"] == {"approve": dashboard, "decline": dashboard}
            assert "people" not in waiting["links"]
            # a link made anyway (by hand, or before the tool said so) answers nothing
            link = LINKS(run_id, "call-1", 0, TRANSFER_ARGS, approvers=["alice"])["approve"]
            for method in ("GET", "POST"):
                refused = await http.request(method, on_server(server_url, link))
                assert refused.status_code == 403
                assert "This call is answered only by a signed-in person" in refused.text
            answer = {"runId": run_id, "toolCallId": "call-1", "action": "approve"}
            as_bob = {"authorization": "Bearer tok-bob-8e1"}
            not_bob = await http.post(f"{server_url}/api/inbox/answer", json=answer, headers=as_bob)
            assert not_bob.status_code == 403, not_bob.text
            assert await app.queries(run_id).answers() == []
            as_alice = {"authorization": "Bearer tok-alice-4d2"}
            signed_in = await http.post(f"{server_url}/api/inbox/answer", json=answer, headers=as_alice)
            assert signed_in.status_code == 200, signed_in.text
            await app.attach(run_id, follow="run").result()
            answers = await app.queries(run_id).answers()
            assert [(a.action, a.answered_by) for a in answers] == [("approve", "alice")]
    assert ran == [TRANSFER_ARGS]
