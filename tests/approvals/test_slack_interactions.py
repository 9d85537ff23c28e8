"""Slack's interactive buttons against a real server, Temporal and a local server playing Slack: the message is
posted with the bot token, a click answers as the Slack user's principal (mapped by id, or by email through
users.info) and the message is updated in place; a bad signature, a stale timestamp, a replayed request, an
unknown Slack user and a user who may not answer are refused and answer nothing; every click is in the audit
trail, the refused ones and those on a button that answers nothing as refused."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tempo_agents import App
from tempo_agents.approvals import AnswerLinks
from tempo_agents.errors import ConfigurationError
from tempo_agents.notifications import NotificationSettings, SlackChannel, load_notification_settings
from tempo_agents.server.serving import ApiServer
from tempo_agents.server.slack_replays import SEEN_KEPT_SECONDS, SEEN_SIGNATURES_RUN, seen_key
from tests.conftest import AppFactory, running_worker
from tests.support.approval_agents import payments_agent
from tests.support.polling import until
from tests.support.slack_server import SLACK_USER_AGENT, FakeSlack, block_actions, fake_slack, signed_request

BOT_TOKEN = "xoxb-test-bot-token-5c1e"
SIGNING_SECRET = "slack-signing-secret-0a9d"
LINKS = AnswerLinks(["link-secret-slack-tests"], base_url="https://agents.example.test")
OPS = "Bearer tok-ops-3f1"
USERS = {"U0ALICE": "alice@example.test", "U0BOB": "bob@example.test", "U0EVE": "eve@example.test"}


def slack_app(make_app: AppFactory, slack: FakeSlack, ran: list[dict[str, Any]]) -> App:
    agent, _ = payments_agent(ran, tool_approvers=["alice"])
    channel = SlackChannel(
        name="slack",
        bot_token=BOT_TOKEN,
        slack_channel="C0001",
        signing_secret=SIGNING_SECRET,
        users={"U0ALICE": "alice"},
        emails={"bob@example.test": "bob"},  # eve's email names nobody
        api_url=slack.api_url,
    )
    settings = NotificationSettings(
        channels=[channel], public_url="https://agents.example.test", first_retry=timedelta(milliseconds=100)
    )
    return make_app([agent], notifications=settings, answer_links=LINKS)


@asynccontextmanager
async def served(app: App) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    server = ApiServer(app, port=0, tokens={"tok-ops-3f1": "ops"})
    await server.start()
    try:
        async with httpx.AsyncClient(timeout=60) as http:  # no bearer token: Slack's signature is the credential
            yield server.url, http
    finally:
        await server.stop()


async def test_a_click_answers_as_the_slack_users_principal_and_refusals_answer_nothing(
    make_app: AppFactory,
) -> None:
    ran: list[dict[str, Any]] = []
    with fake_slack(FakeSlack(BOT_TOKEN, USERS)) as slack:
        app = slack_app(make_app, slack, ran)
        async with running_worker(app), served(app) as (server_url, http):
            route = f"{server_url}/api/slack/interactions"
            first = await app.agent("payments").generate("pay", memory={"thread": "t-slack", "resource": "acme"})
            assert first.finish_reason == "suspended"
            run_id = first.run_id
            [posted] = await until(lambda: slack.posted)
            assert posted["channel"] == "C0001"
            assert posted["text"].startswith("Approval needed: transfer in run ")
            [actions] = [block for block in posted["blocks"] if block["type"] == "actions"]
            buttons = {element["action_id"]: element for element in actions["elements"]}
            assert sorted(buttons) == ["answer:approve", "answer:decline", "open-dashboard"]
            approve = buttons["answer:approve"]["value"]
            assert buttons["open-dashboard"]["url"] == f"https://agents.example.test/#/runs/{run_id}"

            async def click(user: str, name: str, **signing: Any) -> tuple[httpx.Response, dict[str, Any]]:
                payload = block_actions(user, "answer:approve", approve, slack.response_url(name))
                body, headers = signed_request(signing.pop("secret", SIGNING_SECRET), payload, **signing)
                return await http.post(route, content=body, headers=headers), payload

            forged, _ = await click("U0ALICE", "forged", secret="not-the-apps-secret")
            assert forged.status_code == 401 and "signature does not match" in forged.text
            stale, _ = await click("U0ALICE", "stale", timestamp=int(time.time()) - 6 * 60)
            assert stale.status_code == 401 and "too old" in stale.text
            assert "forged" not in slack.responses and "stale" not in slack.responses

            unknown, _ = await click("U0EVE", "eve")
            assert unknown.status_code == 200
            [told_eve] = slack.responses["eve"]
            assert told_eve["response_type"] == "ephemeral" and told_eve["replace_original"] is False
            assert told_eve["text"].startswith("You may not answer this")

            not_allowed, _ = await click("U0BOB", "bob")  # bob is known (by his email) but the call is alice's
            assert not_allowed.status_code == 200
            [told_bob] = slack.responses["bob"]
            assert told_bob["response_type"] == "ephemeral"
            assert told_bob["text"] == 'You may not answer this: tool call "call-1" may be answered only by alice'
            assert "U0BOB" in slack.lookups and "U0EVE" in slack.lookups
            assert await app.queries(run_id).answers() == []

            payload = block_actions("U0ALICE", "answer:approve", approve, slack.response_url("alice"))
            body, headers = signed_request(SIGNING_SECRET, payload)
            barrier = asyncio.Barrier(5)

            async def send_copy() -> httpx.Response:
                await barrier.wait()  # every copy ready before any is sent: Slack retrying, or a replay racing it
                return await http.post(route, content=body, headers=headers)

            copies = await asyncio.gather(*(send_copy() for _ in range(5)))
            assert sorted(copy.status_code for copy in copies) == [200, 401, 401, 401, 401]  # exactly one answers
            assert all("taken already" in copy.text for copy in copies if copy.status_code == 401)
            [updated] = slack.responses["alice"]
            assert updated["replace_original"] is True and updated["text"] == "Approved by @alice"
            replayed = await http.post(route, content=body, headers=headers)
            assert replayed.status_code == 401 and "taken already" in replayed.text
            assert slack.responses["alice"] == [updated]

            await app.attach(run_id, follow="run").result()
            answers = await app.queries(run_id).answers()
            assert [(a.tool_call_id, a.action, a.answered_by) for a in answers] == [("call-1", "approve", "alice")]

            audit = await http.get(
                f"{server_url}/api/audit", params={"action": "answer-slack"}, headers={"authorization": OPS}
            )
            records = audit.json()["records"]
            assert {(r["target"], r["tenant"], r["client"], r["userAgent"]) for r in records} == {
                (f"{run_id}/call-1", "acme", "127.0.0.1", SLACK_USER_AGENT)
            }  # the call each click's button answers, even on a request refused before it was taken
            clicks = [(r["principal"], r["outcome"], r["status"], r["code"]) for r in reversed(records)]
            assert clicks[:4] == [
                (None, "refused", 401, "SLACK_FORGED"),
                (None, "refused", 401, "SLACK_STALE"),
                (None, "refused", 200, "SLACK_USER_UNKNOWN"),  # Slack is answered 200: the clicker is told why
                ("bob", "refused", 200, "AGENT_RESUME_NOT_AN_APPROVER"),
            ]
            assert sorted(clicks[4:], key=str) == sorted(
                [("alice", "done", 200, None)] + [(None, "refused", 401, "SLACK_REPLAYED")] * 5, key=str
            )  # one copy answered; the replays name nobody: whoever sent them is not known to be alice
    assert len(ran) == 1


async def test_taken_requests_are_forgotten_after_the_window_and_a_replay_inside_it_is_still_refused(
    make_app: AppFactory,
) -> None:
    with fake_slack(FakeSlack(BOT_TOKEN, USERS)) as slack:
        app = slack_app(make_app, slack, [])
        async with served(app) as (server_url, http):
            route = f"{server_url}/api/slack/interactions"

            def click(name: str, timestamp: int) -> tuple[bytes, dict[str, str]]:  # a user linked to nobody
                return signed_request(
                    SIGNING_SECRET,
                    block_actions("U0NOBODY", "answer:approve", "no-value", slack.response_url(name)),
                    timestamp=timestamp,
                )

            now = int(time.time())
            old = seen_key(now - SEEN_KEPT_SECONDS - 5, "v0=" + "0" * 64)  # taken by this store six minutes ago
            await app.store.saved_or_counted(SEEN_SIGNATURES_RUN, f"{old}:never-saved", old)
            assert await app.store.saved_outcome(SEEN_SIGNATURES_RUN, old) == {"starts": 1}
            recent_body, recent_headers = click("recent", now - 240)  # four minutes old: inside the window
            assert (await http.post(route, content=recent_body, headers=recent_headers)).status_code == 200
            new_body, new_headers = click("new", now)
            assert (await http.post(route, content=new_body, headers=new_headers)).status_code == 200
            assert await app.store.saved_outcome(SEEN_SIGNATURES_RUN, old) is None
            for body, headers in ((recent_body, recent_headers), (new_body, new_headers)):
                replayed = await http.post(route, content=body, headers=headers)
                assert replayed.status_code == 401 and "taken already" in replayed.text
            assert [len(slack.responses[name]) for name in ("recent", "new")] == [1, 1]


async def test_a_click_on_the_dashboard_button_is_recorded_as_answering_nothing(make_app: AppFactory) -> None:
    with fake_slack(FakeSlack(BOT_TOKEN, USERS)) as slack:
        app = slack_app(make_app, slack, [])
        async with served(app) as (server_url, http):
            payload = block_actions("U0ALICE", "open-dashboard", "", slack.response_url("dashboard"))
            [button] = payload["actions"]
            del button["value"]  # a link button carries its url, no value
            button["url"] = "https://agents.example.test/#/runs/some-run"
            body, headers = signed_request(SIGNING_SECRET, payload)
            clicked = await http.post(f"{server_url}/api/slack/interactions", content=body, headers=headers)
            assert clicked.status_code == 200
            assert "dashboard" not in slack.responses  # the message stays as it is
            audit = await http.get(
                f"{server_url}/api/audit", params={"action": "answer-slack"}, headers={"authorization": OPS}
            )
            [record] = audit.json()["records"]
            assert (record["target"], record["outcome"], record["status"], record["code"]) == (
                None,
                "refused",
                200,
                "SLACK_NOT_AN_ANSWER",
            )  # not "done": nothing was answered


async def test_a_button_value_is_no_link_and_a_link_is_no_button_value(make_app: AppFactory) -> None:
    ran: list[dict[str, Any]] = []
    with fake_slack(FakeSlack(BOT_TOKEN, USERS)) as slack:
        app = slack_app(make_app, slack, ran)
        async with running_worker(app), served(app) as (server_url, http):
            route = f"{server_url}/api/slack/interactions"
            run_id = (await app.agent("payments").generate("pay")).run_id
            [posted] = await until(lambda: slack.posted)
            [actions] = [block for block in posted["blocks"] if block["type"] == "actions"]
            value = next(e["value"] for e in actions["elements"] if e["action_id"] == "answer:decline")
            as_link = await http.post(f"{server_url}/api/answer-links/{value}")
            assert as_link.status_code == 403 and "This link is not a valid answer link." in as_link.text
            link = LINKS(run_id, "call-1", 0, {"amount": 900, "to": "acme"}, approvers=["alice"])
            payload = block_actions(
                "U0ALICE", "answer:approve", link["approve"].rsplit("/", 1)[1], slack.response_url("a")
            )
            body, headers = signed_request(SIGNING_SECRET, payload)
            assert (await http.post(route, content=body, headers=headers)).status_code == 200
            [told] = slack.responses["a"]
            assert told["text"] == "Nothing was answered: this button is not an answer button"
            assert await app.queries(run_id).answers() == []
            payload = block_actions("U0ALICE", "answer:decline", value, slack.response_url("b"))
            body, headers = signed_request(SIGNING_SECRET, payload)
            assert (await http.post(route, content=body, headers=headers)).status_code == 200
            assert slack.responses["b"][0]["text"] == "Declined by @alice"
            await app.attach(run_id, follow="run").result()
    assert ran == []


def test_a_slack_app_channel_from_a_settings_file_takes_its_secrets_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    file = tmp_path / "notifications.toml"
    file.write_text(
        '[[channels]]\ntype = "slack"\nname = "approvals"\nslack_channel = "C0001"\n'
        'bot_token_env = "SLACK_BOT_TOKEN"\nsigning_secret_env = "SLACK_SIGNING_SECRET"\n'
        '[channels.users]\nU0ALICE = "alice"\n'
    )
    [channel] = load_notification_settings(file).channels
    assert isinstance(channel, SlackChannel) and channel.interactive
    assert (channel.bot_token, channel.signing_secret, channel.users) == (
        BOT_TOKEN,
        SIGNING_SECRET,
        {"U0ALICE": "alice"},
    )
    assert BOT_TOKEN not in repr(channel) and SIGNING_SECRET not in repr(channel)
    with pytest.raises(ConfigurationError, match="needs an incoming-webhook url or a bot_token"):
        SlackChannel(name="nothing")
    with pytest.raises(ConfigurationError, match="name its slack_channel"):
        SlackChannel(name="bot", bot_token=BOT_TOKEN)
