"""A local server that plays Slack's side on 127.0.0.1: the Web API's ``chat.postMessage`` and ``users.info`` (with
the documented answer shapes, a bearer bot token required) and the ``response_url`` of interaction payloads; and
how Slack signs the interaction requests it sends to an app."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

from tempo_agents._ports import free_port
from tempo_agents.notifications import sign_slack_request


class FakeSlack:
    """What the fake Slack got: ``posted`` (``chat.postMessage`` bodies), ``responses`` (bodies posted to a
    ``response_url``, by its number). ``users``: Slack user id → email, as ``users.info`` tells them."""

    def __init__(self, bot_token: str, users: dict[str, str]) -> None:
        self.bot_token = bot_token
        self.users = users
        self.posted: list[dict[str, Any]] = []
        self.responses: dict[str, list[dict[str, Any]]] = {}
        self.lookups: list[str] = []
        self.url = ""
        self._lock = threading.Lock()

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"

    def response_url(self, name: str) -> str:
        return f"{self.url}/respond/{name}"

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        parsed = urlparse(path)
        with self._lock:
            if parsed.path.startswith("/respond/"):
                self.responses.setdefault(parsed.path.removeprefix("/respond/"), []).append(json.loads(body))
                return 200, {}
            if headers.get("authorization") != f"Bearer {self.bot_token}":
                return 200, {"ok": False, "error": "invalid_auth"}
            if method == "POST" and parsed.path == "/api/chat.postMessage":
                message = json.loads(body)
                self.posted.append(message)
                return 200, {"ok": True, "channel": message.get("channel"), "ts": f"{time.time():.6f}", "message": {}}
            if method == "GET" and parsed.path == "/api/users.info":
                user = parse_qs(parsed.query).get("user", [""])[0]
                self.lookups.append(user)
                if user not in self.users:
                    return 200, {"ok": False, "error": "user_not_found"}
                profile = {"email": self.users[user], "real_name": user}
                return 200, {"ok": True, "user": {"id": user, "name": user.lower(), "profile": profile}}
        return 404, {"ok": False, "error": "unknown_method"}


@contextmanager
def fake_slack(slack: FakeSlack) -> Iterator[FakeSlack]:
    """Serve ``slack`` on 127.0.0.1 (its ``url`` is set) for the block."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, answer = slack.handle(method, self.path, headers, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    slack.url = f"http://127.0.0.1:{port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield slack
    finally:
        server.shutdown()
        server.server_close()


SLACK_USER_AGENT = "Slackbot 1.0 (+https://api.slack.com/robots)"
"""The user agent of Slack's interaction requests."""


def block_actions(user_id: str, action_id: str, value: str, response_url: str) -> dict[str, Any]:
    """A ``block_actions`` interaction payload as Slack sends it for a click on a message's button."""
    return {
        "type": "block_actions",
        "user": {"id": user_id, "username": user_id.lower(), "name": user_id.lower(), "team_id": "T0001"},
        "api_app_id": "A0001",
        "token": "deprecated-verification-token",
        "container": {"type": "message", "message_ts": "1700000000.000100", "channel_id": "C0001"},
        "trigger_id": "1111.2222.3333",
        "team": {"id": "T0001", "domain": "example"},
        "channel": {"id": "C0001", "name": "approvals"},
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "answers",
                "text": {"type": "plain_text", "text": action_id},
                "value": value,
                "action_ts": "1700000001.000200",
            }
        ],
    }


def signed_request(
    signing_secret: str, payload: dict[str, Any], *, timestamp: int | None = None
) -> tuple[bytes, dict[str, str]]:
    """The form-encoded body and headers of an interaction request, signed as Slack signs it."""
    body = urlencode({"payload": json.dumps(payload)}).encode()
    stamp = int(time.time()) if timestamp is None else timestamp
    headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": str(stamp),
        "x-slack-signature": sign_slack_request(signing_secret, stamp, body),
        "user-agent": SLACK_USER_AGENT,
    }
    return body, headers
