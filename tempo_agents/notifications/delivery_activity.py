"""The delivery activity: one event to one channel, one attempt per call (Temporal retries it with backoff).

The channel is looked up by name in the worker's settings, where its secrets are; the event carries none. Each
attempt is counted (``tempo_agents_notification_deliveries``) and logged without secrets or bodies.

An attempt has the delivery's ``attempt_timeout`` (the activity's start-to-close timeout) in all, whatever it is:
the HTTP request's own timeouts and the mail server's follow it. An attempt still unanswered a moment before that
gives up on its own: the request is abandoned (its connection closed; a mail's SMTP session cut), so a receiver
that was only slow gets the event from the retry, not once more late from the attempt that timed out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import smtplib
import socket
import ssl
import threading
import time
import weakref
from collections.abc import Callable

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from tempo_agents.errors import ConfigurationError
from tempo_agents.metrics import NOTIFICATION_DELIVERIES
from tempo_agents.notifications.channels import (
    EmailChannel,
    NotificationSettings,
    SlackChannel,
    WebhookChannel,
)
from tempo_agents.notifications.delivery_payloads import DELIVER_NOTIFICATION, DeliveryInput, DeliveryOutcome
from tempo_agents.notifications.events import NotificationEvent
from tempo_agents.notifications.messages import email_message, slack_message
from tempo_agents.notifications.signature import signature_header

__all__ = ["CHANNEL_MISSING", "NotificationDeliveries"]

logger = logging.getLogger("tempo_agents.notifications")

CHANNEL_MISSING = "ChannelMissing"

_GIVE_UP_BEFORE = 1.0
"""How long before the attempt's timeout an attempt gives up by itself (at most, and at most a tenth of it), so it
is reported with its reason rather than as a timeout."""


class NotificationDeliveries:
    """The delivery activity, bound to a worker's notification settings."""

    def __init__(self, settings: NotificationSettings, clock: Callable[[], float] = time.time) -> None:
        self._settings = settings
        self._clock = clock
        _hide_secret_urls(settings)

    @activity.defn(name=DELIVER_NOTIFICATION)
    async def deliver(self, delivery: DeliveryInput) -> DeliveryOutcome:
        attempt = activity.info().attempt
        try:
            channel = self._settings.channel(delivery.channel)
        except ConfigurationError as error:
            raise ApplicationError(str(error), type=CHANNEL_MISSING, non_retryable=True) from None
        event = delivery.event
        budget = self._attempt_seconds()
        try:
            async with asyncio.timeout(budget):
                if isinstance(channel, WebhookChannel):
                    status = await self._webhook(channel, event, budget)
                elif isinstance(channel, SlackChannel):
                    status = await _slack(channel, event, budget)
                else:
                    status = await _email(channel, event, budget)
        except (_DeliveryRefused, TimeoutError) as error:
            refused = error if isinstance(error, _DeliveryRefused) else _abandoned(budget)
            NOTIFICATION_DELIVERIES.labels(channel.name, event.type, "failed-attempt").inc()
            logger.warning(
                "notification %s (%s) to %s: attempt %d failed: %s",
                event.id,
                event.type,
                channel.name,
                attempt,
                refused,
            )
            raise ApplicationError(f"attempt {attempt}: {refused}", type="DeliveryFailed") from None
        NOTIFICATION_DELIVERIES.labels(channel.name, event.type, "delivered").inc()
        logger.info("notification %s (%s) delivered to %s on attempt %d", event.id, event.type, channel.name, attempt)
        return DeliveryOutcome(attempt=attempt, status_code=status)

    def _attempt_seconds(self) -> float:
        """How long this attempt may take: its start-to-close timeout (the settings' ``attempt_timeout`` when the
        delivery was handed over), less a moment to report why it gave up."""
        timeout = activity.info().start_to_close_timeout or self._settings.attempt_timeout
        seconds = timeout.total_seconds()
        return seconds - min(_GIVE_UP_BEFORE, seconds / 10)

    async def _webhook(self, channel: WebhookChannel, event: NotificationEvent, budget: float) -> int:
        body = event.model_dump_json(by_alias=True, exclude_none=True, exclude={"links": {"buttons"}}).encode()
        timestamp = int(self._clock())
        headers = {"content-type": "application/json", "webhook-id": event.id, "webhook-timestamp": str(timestamp)}
        secrets = [secret for secret in channel.secrets]
        if secrets:
            headers["webhook-signature"] = signature_header(secrets, event.id, timestamp, body)
        return _accepted(await _post(channel.url, body, budget, headers))


class _DeliveryRefused(Exception):
    """An attempt that did not go through (the reason names no secret)."""


def _abandoned(budget: float) -> _DeliveryRefused:
    return _DeliveryRefused(f"no answer within {budget:g} s: the attempt gave up and abandoned its request")


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()
"""One pooled client per event loop: a client's TLS context costs tens of milliseconds to build, and deliveries to
one receiver reuse its connections."""


def _client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = _clients[loop] = httpx.AsyncClient()
    return client


async def _post(
    url: str, body: bytes, budget: float, headers: dict[str, str] | None = None, *, receiver: str = "the receiver"
) -> httpx.Response:
    """POST ``body``; ``budget``: the attempt's seconds, which the client's own timeouts follow. Cancelled (the
    attempt gave up), the request is dropped with its connection. ``receiver``: who a failure's reason names."""
    try:
        return await _client().post(
            url,
            content=body,
            headers=headers or {"content-type": "application/json"},
            timeout=httpx.Timeout(budget),
        )
    except httpx.HTTPError as error:
        raise _DeliveryRefused(f"{type(error).__name__}: {receiver} could not be reached") from None


def _accepted(response: httpx.Response) -> int:
    """The status of a 2xx answer; refuses any other."""
    if not 200 <= response.status_code < 300:
        raise _DeliveryRefused(f"the receiver answered {response.status_code}")
    return response.status_code


async def _slack(channel: SlackChannel, event: NotificationEvent, budget: float) -> int:
    """An incoming webhook's message, or a Slack app's (``chat.postMessage``, interactive buttons)."""
    if not channel.interactive:
        body = json.dumps(slack_message(event), ensure_ascii=False).encode()
        return _accepted(await _post(channel.url or "", body, budget))
    message = {"channel": channel.slack_channel, **slack_message(event, interactive=True)}
    response = await _post(
        f"{channel.api_url.rstrip('/')}/chat.postMessage",
        json.dumps(message, ensure_ascii=False).encode(),
        budget,
        {"content-type": "application/json; charset=utf-8", "authorization": f"Bearer {channel.bot_token}"},
        receiver="Slack",
    )
    answer = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
    if response.status_code != 200 or not answer.get("ok"):
        raise _DeliveryRefused(f"Slack answered {response.status_code}: {answer.get('error', 'not ok')}")
    return response.status_code


class _SmtpSession:
    """One attempt's SMTP session, run in a thread, which the attempt can cut when it gives up: nothing is sent
    once it is cut, and a session in the middle of its exchange loses its connection."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._smtp: smtplib.SMTP | None = None
        self._cut = False

    def opened(self, smtp: smtplib.SMTP) -> None:
        with self._lock:
            self._smtp = smtp
            if self._cut:
                raise smtplib.SMTPServerDisconnected("the attempt gave up")

    def check(self) -> None:
        with self._lock:
            if self._cut:
                raise smtplib.SMTPServerDisconnected("the attempt gave up")

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            sock = self._smtp.sock if self._smtp is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):  # wakes the thread's blocked read or write, which then fails
                sock.shutdown(socket.SHUT_RDWR)


async def _email(channel: EmailChannel, event: NotificationEvent, budget: float) -> int:
    people = event.links.people or {}
    messages = [
        email_message(event, channel.sender, [to], people.get(channel.principal_of(to)) if people else None)
        for to in channel.to
    ]
    session = _SmtpSession()

    def send() -> None:
        smtp_class = smtplib.SMTP_SSL if channel.use_tls else smtplib.SMTP
        with smtp_class(channel.host, channel.port, timeout=budget) as smtp:
            session.opened(smtp)
            if channel.starttls:
                smtp.starttls(context=ssl.create_default_context())
            if channel.username is not None and channel.password is not None:
                smtp.login(channel.username, channel.password)
            for message in messages:  # one per recipient: each carries links of its own
                session.check()
                smtp.send_message(message)

    try:
        await asyncio.to_thread(send)
    except asyncio.CancelledError:
        session.cut()  # the thread cannot be cancelled: its session is cut, so it sends nothing late
        raise
    except (OSError, smtplib.SMTPException) as error:
        raise _DeliveryRefused(f"{type(error).__name__}: the mail server did not take the message") from None
    return 250


class _SecretUrlFilter(logging.Filter):
    """Drops log records that would print a URL that is itself a credential (a Slack incoming webhook's):
    ``httpx`` logs every request's URL."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        return not any(url in text for url in self.urls)


_SECRET_URLS = _SecretUrlFilter()


def _hide_secret_urls(settings: NotificationSettings) -> None:
    urls = {c.url for c in settings.channels if isinstance(c, SlackChannel) and c.url is not None}
    if urls:
        _SECRET_URLS.urls |= urls
        for name in ("httpx", "httpcore"):
            if _SECRET_URLS not in logging.getLogger(name).filters:
                logging.getLogger(name).addFilter(_SECRET_URLS)
