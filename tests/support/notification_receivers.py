"""Real receivers of notifications on 127.0.0.1: an HTTP server that verifies Standard Webhooks signatures, can
refuse the first N deliveries, be down (503) until told otherwise, or hang; and an SMTP server (aiosmtpd).

Both run in threads of their own, so they answer whatever the test's event loop does, and keep what they got."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents import App
from tempo_agents._ports import free_port
from tempo_agents.ingress.webhooks import WebhookRefusedError, verify_webhook
from tempo_agents.notifications.delivery_payloads import DELIVERIES_QUERY, DeliveryRecord, delivery_workflow_id


class WebhookReceiver:
    """What the receiver got: ``deliveries`` (every request, verified or not) and ``events`` (the verified bodies).

    ``fail_first``: answer 500 to that many requests first. ``down``: answer 503 while set. ``hang_first``: hold
    that many requests ``hang`` seconds each, then answer 504 (the sender has given up on them by then), or, with
    ``accept_after_hang``, take them as any other if the sender is still connected (a receiver that commits a
    delivery only when it can answer it); ``abandoned`` counts the held requests whose sender had hung up, and
    ``held`` those that ended either way. ``secrets``: verify against these (empty: no verification)."""

    def __init__(self, secrets: list[str] | None = None, fail_first: int = 0) -> None:
        self.secrets = secrets or []
        self.fail_first = fail_first
        self.down = False
        self.hang = 0.0
        self.hang_first = 0
        self.accept_after_hang = False
        self.abandoned = 0
        self.held = 0
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        """The receiver's idea of now, which signatures are checked against."""
        self.tolerance = timedelta(minutes=5)
        self.deliveries: list[tuple[int, dict[str, str], bytes]] = []
        self.events: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        self._lock = threading.Lock()
        self.url = ""

    def answer(self, headers: dict[str, str], body: bytes, connected: Callable[[], bool] = lambda: True) -> int:
        with self._lock:
            hung = self.hang_first > 0
            self.hang_first -= hung
        if hung:
            time.sleep(self.hang)
        with self._lock:
            self.held += hung
            if hung and self.accept_after_hang and not connected():
                self.abandoned += 1
                return 504  # nobody reads it: the sender hung up
            if hung and not self.accept_after_hang:
                status = 504
            elif self.down:
                status = 503
            elif self.fail_first > 0:
                self.fail_first -= 1
                status = 500
            else:
                status = 204
                if self.secrets:
                    try:
                        verify_webhook(self.secrets, headers, body, now=self.clock(), tolerance=self.tolerance)
                    except WebhookRefusedError as refused:
                        self.refusals.append(str(refused))
                        status = refused.status
            self.deliveries.append((status, headers, body))
            if status == 204:
                self.events.append(json.loads(body))
            return status

    def ids(self) -> list[str]:
        return [event["id"] for event in self.events]


@contextmanager
def webhook_receiver(receiver: WebhookReceiver) -> Iterator[WebhookReceiver]:
    """Serve ``receiver`` on 127.0.0.1 (its ``url`` is set) for the block."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            status = receiver.answer({k.lower(): v for k, v in self.headers.items()}, body, self._connected)
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _connected(self) -> bool:
            """Whether the sender still holds the connection (a closed one reads as empty at once)."""
            readable, _, _ = select.select([self.connection], [], [], 0)
            return not readable or self.connection.recv(1, socket.MSG_PEEK) != b""

    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    receiver.url = f"http://127.0.0.1:{port}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


class Mailbox:
    """What a test's SMTP server accepted (``messages``). ``hang_first``: hold that many messages ``hang`` seconds
    before answering, then take each only if the sender is still connected; ``held`` counts the held messages
    that ended, ``abandoned`` those whose sender had hung up."""

    def __init__(self) -> None:
        self.messages: list[tuple[Envelope, EmailMessage]] = []
        self.hang = 0.0
        self.hang_first = 0
        self.held = 0
        self.abandoned = 0

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.hang_first > 0:
            self.hang_first -= 1
            try:
                await asyncio.sleep(self.hang)
                if server.transport is None or server.transport.is_closing():
                    self.abandoned += 1
                    return "451 nobody waits for this answer"
            except asyncio.CancelledError:  # the connection was lost while the message was held
                self.abandoned += 1
                raise
            finally:
                self.held += 1
        content = envelope.original_content or b""
        message = message_from_bytes(content, _class=EmailMessage, policy=policy.default)
        self.messages.append((envelope, message))
        return "250 Message accepted for delivery"


@contextmanager
def smtp_server(mailbox: Mailbox | None = None) -> Iterator[tuple[int, list[tuple[Envelope, EmailMessage]]]]:
    """A real SMTP server (aiosmtpd) on 127.0.0.1: its port and the messages it accepted (into ``mailbox``)."""
    mailbox = mailbox or Mailbox()
    port = free_port()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield port, mailbox.messages
    finally:
        controller.stop()


async def settled_deliveries(app: App, run_id: str, count: int) -> list[DeliveryRecord]:
    """The run's delivery records once ``count`` of them have ended (delivered or failed)."""
    handle = app.client.get_workflow_handle(delivery_workflow_id(run_id))
    records: list[DeliveryRecord] = []
    for _ in range(600):
        try:
            records = await handle.query(DELIVERIES_QUERY, result_type=list[DeliveryRecord])
        except RPCError as error:  # the run's first event may not have been handed over yet
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
        if sum(r.status in ("delivered", "failed") for r in records) >= count:
            return records
        await asyncio.sleep(0.1)
    raise AssertionError(f"the deliveries did not end: {records}")
